package imagecache

import (
	"math/big"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzParseImages checks that no ConfigMap entry makes ParseImages panic
// and that every image it accepts is usable: a valid DataVolume name, an
// http(s) URL and a size of whole bytes from 1 to MaxSize.
func FuzzParseImages(f *testing.F) {
	f.Add("ubuntu", "url: http://example.com/u.img\nsize: 10Gi\n")
	f.Add("x", "url: https://e\nsize: 1\nstorageClassName: fast\n")
	f.Add("BAD", "size: -1")
	f.Add("huge", "url: http://e\nsize: 99999999999999999999999999Ei\n")
	f.Add("fraction", "url: http://e\nsize: 1.5m\n")
	f.Fuzz(func(t *testing.T, name, value string) {
		images, err := ParseImages(&corev1.ConfigMap{Data: map[string]string{name: value}})
		if err != nil && len(images) > 0 {
			t.Fatalf("ParseImages returned %d images with the error %v for a single entry", len(images), err)
		}
		for _, img := range images {
			if errs := validation.IsDNS1123Label(NamedDataVolumeName(img.Name)); len(errs) > 0 {
				t.Errorf("accepted image %q makes an invalid DataVolume name: %v", img.Name, errs)
			}
			if !strings.HasPrefix(img.URL, "http://") && !strings.HasPrefix(img.URL, "https://") {
				t.Errorf("accepted URL %q", img.URL)
			}
			if img.Size.Sign() <= 0 || img.Size.Cmp(maxSize) > 0 || !wholeNumber(img.Size) {
				t.Errorf("accepted size %s", img.Size.String())
			}
		}
	})
}

// wholeNumber reports whether q has no fraction: its decimal digits after
// the point, if any, are all zero.
func wholeNumber(q resource.Quantity) bool {
	q = q.DeepCopy()
	d := q.AsDec()
	if d.Scale() <= 0 {
		return true
	}
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale())), nil)
	return new(big.Int).Mod(d.UnscaledBig(), unit).Sign() == 0
}
