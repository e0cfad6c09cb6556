package imagecache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Label marks cache DataVolumes; its value tells who made one. Only
// DataVolumes with this label are ever removed as unused.
const Label = "kkp-kubevirt.io/image-cache"

const (
	// KindHTTP is the Label value of a DataVolume the provider imported
	// for an HTTP primary disk.
	KindHTTP = "http"
	// KindNamed is the Label value of a DataVolume the infra-controller
	// imported for a named image.
	KindNamed = "named"
)

// URLAnnotation records the image URL on a cache DataVolume, for people;
// the name already identifies (URL, storage class).
const URLAnnotation = "kkp-kubevirt.io/image-url"

// SizeAnnotation records the size a cache DataVolume requests, so readers
// that see only its metadata can tell whether a disk can clone it.
const SizeAnnotation = "kkp-kubevirt.io/image-size"

// BindImmediateAnnotation asks CDI to bind a DataVolume's PVC at once. No
// pod ever mounts a cache DataVolume (VMs clone it), so on a
// WaitForFirstConsumer storage class, with CDI's HonorWaitForFirstConsumer
// gate on (the installer turns it on), it would otherwise wait for a
// consumer forever and every clone with it.
const BindImmediateAnnotation = "cdi.kubevirt.io/storage.bind.immediate.requested"

// ConfigMapName is the ConfigMap in a tenant namespace that lists the
// named images of the tenant cluster.
const ConfigMapName = "image-cache"

// MaxSize is the largest size of a named image, far above any OS image; a
// larger one is a typo and would ask a storage class for that much.
const MaxSize = "64Ti"

var maxSize = resource.MustParse(MaxSize)

// namedPrefix and httpPrefix start the names of cache DataVolumes.
const (
	namedPrefix = "image-"
	httpPrefix  = "image-cache-"
)

// DataVolumeName returns the name of the cache DataVolume of an HTTP image
// in a storage class ("" is the default class): the same inputs always
// give the same name, so concurrent creators meet at one object.
func DataVolumeName(url, storageClass string) string {
	sum := sha256.Sum256([]byte(url + "\x00" + storageClass))
	return httpPrefix + hex.EncodeToString(sum[:])[:20]
}

// NamedDataVolumeName returns the name of the DataVolume of a named image;
// a primary disk clones it with source pvc of that name.
func NamedDataVolumeName(image string) string {
	return namedPrefix + image
}

// Image is one named image of a tenant cluster.
type Image struct {
	// Name identifies the image; the DataVolume is
	// NamedDataVolumeName(Name).
	Name string `json:"-"`
	// URL is the HTTP(S) address of the image.
	URL string `json:"url"`
	// StorageClassName is the infra storage class of the DataVolume; the
	// default class when empty.
	StorageClassName string `json:"storageClassName,omitempty"`
	// Size is the requested size of the DataVolume.
	Size resource.Quantity `json:"size"`
}

// ParseImages reads the named images of a ConfigMap: every key is an image
// name and its value a YAML object with url, size (a whole number of bytes
// from 1 to MaxSize) and optionally storageClassName. Images come back
// sorted by name; every invalid entry is reported with its key and field.
func ParseImages(cm *corev1.ConfigMap) ([]Image, error) {
	var images []Image
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(cm.Data)) {
		img, err := parseImage(name, cm.Data[name])
		if err != nil {
			problems = append(problems, fmt.Sprintf("image %q: %v", name, err))
			continue
		}
		images = append(images, img)
	}
	if len(problems) > 0 {
		return images, fmt.Errorf("invalid images in ConfigMap %s/%s: %s", cm.Namespace, cm.Name, strings.Join(problems, "; "))
	}
	return images, nil
}

func parseImage(name, value string) (Image, error) {
	if errs := validation.IsDNS1123Label(NamedDataVolumeName(name)); len(errs) > 0 {
		return Image{}, fmt.Errorf("the name does not make a valid DataVolume name: %s", strings.Join(errs, ", "))
	}
	var img Image
	if err := yaml.UnmarshalStrict([]byte(value), &img); err != nil {
		return Image{}, fmt.Errorf("failed to parse: %w", err)
	}
	img.Name = name
	if !strings.HasPrefix(img.URL, "http://") && !strings.HasPrefix(img.URL, "https://") {
		return Image{}, fmt.Errorf("url must be an http or https URL, got %q", img.URL)
	}
	if err := checkSize(img.Size); err != nil {
		return Image{}, fmt.Errorf("size: %w, got %s", err, sizeAsWritten(value, img.Size))
	}
	return img, nil
}

// checkSize refuses sizes that are not a whole number of bytes from 1 to
// MaxSize. Quantity rounds fractions of a nano up and cuts binary values
// beyond int64 to its maximum, so a size far too large is still caught by
// the bound.
func checkSize(size resource.Quantity) error {
	switch {
	case size.Sign() <= 0:
		return fmt.Errorf("must be positive")
	case size.Cmp(maxSize) > 0:
		return fmt.Errorf("must be at most %s", MaxSize)
	}
	if whole := resource.NewQuantity(size.Value(), resource.BinarySI); whole.Cmp(size) != 0 {
		return fmt.Errorf("must be a whole number of bytes, such as 10Gi")
	}
	return nil
}

// sizeAsWritten returns the size of an entry as its YAML says it, since
// the parsed Quantity may be rounded or cut; the parsed one when that
// cannot be read.
func sizeAsWritten(value string, parsed resource.Quantity) string {
	var raw struct {
		Size any `json:"size"`
	}
	if err := yaml.Unmarshal([]byte(value), &raw); err != nil || raw.Size == nil {
		return strconv.Quote(parsed.String())
	}
	return strconv.Quote(fmt.Sprint(raw.Size))
}
