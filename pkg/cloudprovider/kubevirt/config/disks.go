package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	accessModes = []corev1.PersistentVolumeAccessMode{
		corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod,
	}
	storageTargets   = []StorageTarget{StorageTargetStorage, StorageTargetPVC}
	imageSourceKinds = []ImageSourceKind{ImageSourceHTTP, ImageSourceRegistry, ImageSourcePVC}
	pullMethods      = []string{"node", "pod"}
	registrySchemes  = []string{"docker://", "oci-archive://"}
	// reservedDiskNames are the VM disk names the provider uses itself.
	reservedDiskNames = []string{RootDiskName, PrimaryDiskVolumeName, "cloudinitdisk"}
)

// disks resolves the primary and secondary disks.
func (rs *resolution) disks(s *Settings, p *field.Path, t *Template) {
	s.PrimaryDisk = rs.primaryDisk(p.Child("primaryDisk"), &t.PrimaryDisk)
	s.SecondaryDisks = rs.secondaryDisks(p.Child("secondaryDisks"), t.SecondaryDisks)
}

// disk resolves what every disk has. An empty access mode stays empty: the
// provider reads it from the CDI StorageProfile.
func (rs *resolution) disk(p *field.Path, d *Disk) DiskSettings {
	var out DiskSettings
	sizePath := p.Child("size")
	if q := rs.requiredQuantity(sizePath, rs.str(sizePath, d.Size), "10Gi"); q != nil {
		out.Size = *q
	}
	classPath := p.Child("storageClassName")
	// Empty means the infra cluster's default StorageClass, which the
	// provider looks up when it inspects the infra cluster.
	if out.StorageClassName = rs.str(classPath, d.StorageClassName); out.StorageClassName != "" {
		rs.dnsSubdomain(classPath, out.StorageClassName)
	}
	modePath := p.Child("storageAccessType")
	if mode := corev1.PersistentVolumeAccessMode(rs.str(modePath, d.StorageAccessType)); mode != "" {
		enum(rs, modePath, mode, accessModes)
		out.AccessMode = mode
	}
	return out
}

func (rs *resolution) primaryDisk(p *field.Path, d *PrimaryDisk) PrimaryDiskSettings {
	out := PrimaryDiskSettings{DiskSettings: rs.disk(p, &d.Disk), StorageTarget: StorageTargetStorage}
	targetPath := p.Child("storageTarget")
	if target := StorageTarget(rs.str(targetPath, d.StorageTarget)); target != "" {
		enum(rs, targetPath, target, storageTargets)
		out.StorageTarget = target
	}
	out.Source = rs.imageSource(p, d)
	disablePath := p.Child("disablePreAllocatedDataVolumes")
	disabled, set := rs.boolean(disablePath, d.DisablePreAllocatedDataVolumes)
	if set && disabled && out.Source.Kind != ImageSourceHTTP && out.Source.Kind != "" {
		rs.warnf("%s is ignored: only http images are pre-allocated", disablePath)
	}
	out.PreAllocated = out.Source.Kind == ImageSourceHTTP && !disabled
	return out
}

// imageSource resolves where the OS image comes from and how to fetch it.
func (rs *resolution) imageSource(p *field.Path, d *PrimaryDisk) ImageSource {
	sourcePath, imagePath := p.Child("source"), p.Child("osImage")
	kind := ImageSourceKind(rs.str(sourcePath, d.Source))
	known := kind == "" || enum(rs, sourcePath, kind, imageSourceKinds)
	image := rs.str(imagePath, d.OsImage)
	var out ImageSource
	switch {
	case image == "":
		rs.add(field.Required(imagePath, "an http(s) URL, a docker:// or oci-archive:// URL, or a PVC as namespace/name or name"))
	case known:
		out = rs.imageLocation(imagePath, kind, image)
	}

	pullPath := p.Child("pullMethod")
	pull := rs.str(pullPath, d.PullMethod)
	if pull != "" && enum(rs, pullPath, pull, pullMethods) && out.Kind != ImageSourceRegistry && out.Kind != "" {
		rs.warnf("%s is ignored: it only applies to registry sources", pullPath)
	}
	if out.Kind == ImageSourceRegistry {
		out.PullMethod = pull
		if pull == "" {
			out.PullMethod = "node"
		}
	}
	rs.httpOptions(p, d, &out)
	return out
}

// imageLocation interprets osImage for an explicit or detected source.
func (rs *resolution) imageLocation(p *field.Path, kind ImageSourceKind, image string) ImageSource {
	detected := kind == ""
	if detected {
		kind = detectSource(image)
	}
	out := ImageSource{Kind: kind}
	switch kind {
	case ImageSourceHTTP:
		if !isHTTPURL(image) {
			rs.add(field.Invalid(p, image, "must be an http:// or https:// URL when source is http"))
		}
		out.URL = image
	case ImageSourceRegistry:
		if !hasAnyPrefix(image, registrySchemes) {
			rs.add(field.Invalid(p, image, "must be a docker:// or oci-archive:// URL when source is registry"))
		}
		out.URL = image
	case ImageSourcePVC:
		out.PVCNamespace, out.PVCName = rs.pvcReference(p, image, detected)
	}
	return out
}

// detectSource is upstream's auto-detection for an empty source.
func detectSource(image string) ImageSourceKind {
	switch {
	case hasAnyPrefix(image, registrySchemes):
		return ImageSourceRegistry
	case isHTTPURL(image):
		return ImageSourceHTTP
	default:
		return ImageSourcePVC
	}
}

func isHTTPURL(s string) bool {
	u, err := url.ParseRequestURI(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, prefix := range prefixes {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// pvcReference splits "namespace/name" or "name"; an empty namespace means
// the VM's namespace.
func (rs *resolution) pvcReference(p *field.Path, image string, detected bool) (string, string) {
	intro := "must name a PVC as namespace/name or name"
	if detected {
		intro = "must be an http(s) URL, a docker:// or oci-archive:// URL, or a PVC as namespace/name or name"
	}
	return rs.reference(p, image, intro, dnsSubdomainCheck)
}

// reference splits "namespace/name" or "name" and checks both parts; intro
// opens the error message.
func (rs *resolution) reference(p *field.Path, ref, intro string, nameCheck func(string) []string) (string, string) {
	namespace, name, hasNamespace := strings.Cut(ref, "/")
	if !hasNamespace {
		namespace, name = "", ref
	}
	switch {
	case strings.Contains(name, "/"):
		rs.add(field.Invalid(p, ref, intro))
	case hasNamespace && validationMessages(dnsLabelCheck, namespace) != "":
		rs.add(field.Invalid(p, ref, fmt.Sprintf("%s; the namespace: %s", intro, validationMessages(dnsLabelCheck, namespace))))
	case validationMessages(nameCheck, name) != "":
		rs.add(field.Invalid(p, ref, fmt.Sprintf("%s; the name: %s", intro, validationMessages(nameCheck, name))))
	}
	return namespace, name
}

// httpOptions resolves the HTTP importer's headers and credentials.
func (rs *resolution) httpOptions(p *field.Path, d *PrimaryDisk, out *ImageSource) {
	headersPath, headersRefPath := p.Child("extraHeaders"), p.Child("extraHeadersSecretRef")
	secretRefPath := p.Child("dataVolumeSecretRef")
	headersRef := rs.str(headersRefPath, d.ExtraHeadersSecretRef)
	secretRef := rs.str(secretRefPath, d.DataVolumeSecretRef)
	for i, h := range d.ExtraHeaders {
		if !isHeader(h) {
			rs.add(field.Invalid(headersPath.Index(i), omit, `must look like "Name: value"`))
		}
	}
	if len(d.ExtraHeaders) > 0 && headersRef != "" {
		rs.add(field.Forbidden(headersRefPath, "may not be set together with extraHeaders"))
	}
	if headersRef != "" {
		rs.dnsSubdomain(headersRefPath, headersRef)
	}
	if secretRef != "" {
		rs.dnsSubdomain(secretRefPath, secretRef)
	}
	if out.Kind != ImageSourceHTTP {
		for _, used := range []struct {
			set  bool
			path *field.Path
		}{{len(d.ExtraHeaders) > 0, headersPath}, {headersRef != "", headersRefPath}, {secretRef != "", secretRefPath}} {
			if used.set && out.Kind != "" {
				rs.warnf("%s is ignored: it only applies to http sources", used.path)
			}
		}
		return
	}
	if len(d.ExtraHeaders) > 0 {
		out.ExtraHeaders = slices.Clone(d.ExtraHeaders)
	}
	out.ExtraHeadersSecretRef, out.SecretRef = headersRef, secretRef
}

// isHeader checks "Name: value" with an RFC 9110 token as the name.
func isHeader(h string) bool {
	name, _, ok := strings.Cut(h, ":")
	if !ok || name == "" {
		return false
	}
	for _, r := range name {
		if r > 0x7e || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

// secondaryDisks resolves the data disks; each keeps its own access mode.
func (rs *resolution) secondaryDisks(p *field.Path, disks []SecondaryDisk) []SecondaryDiskSettings {
	if len(disks) == 0 {
		return nil
	}
	out := make([]SecondaryDiskSettings, 0, len(disks))
	seen := map[string]bool{}
	for i := range disks {
		diskPath := p.Index(i)
		sd := SecondaryDiskSettings{DiskSettings: rs.disk(diskPath, &disks[i].Disk), Name: disks[i].Name}
		namePath := diskPath.Child("name")
		switch {
		case sd.Name == "":
			sd.Name = fmt.Sprintf("secondarydisk%d", i)
		case !rs.dnsLabel(namePath, sd.Name):
		case containsValue(reservedDiskNames, sd.Name):
			rs.add(field.Invalid(namePath, sd.Name, "is reserved; the provider uses "+quoteList(reservedDiskNames)))
		}
		if seen[sd.Name] {
			rs.add(field.Duplicate(namePath, sd.Name))
		}
		seen[sd.Name] = true
		out = append(out, sd)
	}
	return out
}
