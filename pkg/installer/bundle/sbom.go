package bundle

import (
	"bytes"
	"fmt"
	"net/url"
	"path"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/yaml"
)

// Properties of the SBOM's components, in the kkp-kubevirt namespace.
const (
	// PropertyKind is "image" or "chart".
	PropertyKind = "kkp-kubevirt:bundle:kind"
	// PropertyReference is an image's upstream reference.
	PropertyReference = "kkp-kubevirt:bundle:reference"
	// PropertyPlatform is an image's platform, os/architecture[/variant].
	PropertyPlatform = "kkp-kubevirt:bundle:platform"
	// PropertyPath is a file's or a chart's path in the bundle.
	PropertyPath = "kkp-kubevirt:bundle:path"
	// PropertyUpstreamDigest is the digest of an upstream index the bundle
	// holds a filtered copy of.
	PropertyUpstreamDigest = "kkp-kubevirt:bundle:upstream-digest"
	// PropertyReferrer is the reference of a stored signature, attestation
	// or SBOM of an image, one property per referrer.
	PropertyReferrer = "kkp-kubevirt:bundle:referrer"
)

// Kinds of SBOM components.
const (
	KindImage = "image"
	KindChart = "chart"
)

// BuildSBOM describes the bundle of meta as a CycloneDX BOM: one container
// component per image, with its reference, manifest digest and platform,
// and one application component per chart, with its version. A bundle
// carries no binaries, so the BOM lists none. The BOM has no serial number
// or timestamp, so equal content gives an equal SBOM and an equal bundle.
func BuildSBOM(meta Metadata) *cdx.BOM {
	bom := cdx.NewBOM()
	bom.Metadata = &cdx.Metadata{
		Tools: &cdx.ToolsChoice{Components: &[]cdx.Component{{Type: cdx.ComponentTypeApplication, Name: "kubevirt-installer"}}},
		Component: &cdx.Component{
			Type: cdx.ComponentTypeData, Name: "kubevirt-installer offline bundle",
			Properties: platformProperties(nil, meta.Platforms),
		},
	}
	components := make([]cdx.Component, 0, len(meta.Images)+len(meta.Charts))
	for _, img := range meta.Images {
		components = append(components, ImageComponent(img))
	}
	for _, c := range meta.Charts {
		components = append(components, cdx.Component{
			BOMRef: "chart:" + c.Path, Type: cdx.ComponentTypeApplication, Name: c.Name, Version: c.Version,
			Properties: &[]cdx.Property{{Name: PropertyKind, Value: KindChart}, {Name: PropertyPath, Value: c.Path}},
		})
		if c.AppVersion != "" {
			components[len(components)-1].Description = "deploys version " + c.AppVersion
		}
	}
	bom.Components = &components
	return bom
}

// ImageComponent describes one image as a CycloneDX container component:
// one platform property per stored platform and one referrer property per
// stored referrer. Its package URL follows the purl oci type: the
// repository's last segment as name, the manifest digest as version, the
// repository and tag as qualifiers, and the architecture for a
// single-platform image. Package imagebuild describes its images with it.
func ImageComponent(img ImageEntry) cdx.Component {
	repo, tag := img.Ref, ""
	if ref, err := name.ParseReference(img.Ref); err == nil {
		repo = ref.Context().Name()
		if t, ok := ref.(name.Tag); ok {
			tag = t.TagStr()
		}
	}
	props := []cdx.Property{
		{Name: PropertyKind, Value: KindImage},
		{Name: PropertyReference, Value: img.Ref},
	}
	props = *platformProperties(props, img.Platforms)
	if img.UpstreamDigest != "" {
		props = append(props, cdx.Property{Name: PropertyUpstreamDigest, Value: img.UpstreamDigest})
	}
	for _, r := range img.Referrers {
		props = append(props, cdx.Property{Name: PropertyReferrer, Value: r.Ref})
	}
	arch := ""
	if len(img.Platforms) == 1 {
		arch = img.Platforms[0]
	}
	c := cdx.Component{
		BOMRef: img.Ref, Type: cdx.ComponentTypeContainer, Name: repo, Version: tag,
		PackageURL: ociPURL(repo, tag, img.Digest, arch), Properties: &props,
	}
	if algo, hex, ok := strings.Cut(img.Digest, ":"); ok && algo == "sha256" {
		c.Hashes = &[]cdx.Hash{{Algorithm: cdx.HashAlgoSHA256, Value: hex}}
	}
	return c
}

// platformProperties appends one platform property per platform to props.
func platformProperties(props []cdx.Property, platforms []string) *[]cdx.Property {
	for _, p := range platforms {
		props = append(props, cdx.Property{Name: PropertyPlatform, Value: p})
	}
	return &props
}

// ociPURL returns pkg:oci/NAME@DIGEST?arch=...&repository_url=...&tag=...,
// qualifiers sorted by key as the purl specification asks.
func ociPURL(repo, tag, digest, platform string) string {
	q := url.Values{"repository_url": {repo}}
	if tag != "" {
		q.Set("tag", tag)
	}
	if parts := strings.Split(platform, "/"); len(parts) >= 2 {
		q.Set("arch", parts[1])
	}
	return "pkg:oci/" + url.PathEscape(path.Base(repo)) + "@" + strings.ReplaceAll(url.PathEscape(digest), ":", "%3A") + "?" + q.Encode()
}

// SBOMSpecVersion is the CycloneDX version of the SBOM: 1.6, which current
// scanners read, rather than the library's newest.
const SBOMSpecVersion = cdx.SpecVersion1_6

// EncodeSBOM renders bom as indented CycloneDX JSON.
func EncodeSBOM(bom *cdx.BOM) ([]byte, error) {
	var b bytes.Buffer
	enc := cdx.NewBOMEncoder(&b, cdx.BOMFileFormatJSON).SetPretty(true).SetEscapeHTML(false)
	if err := enc.EncodeVersion(bom, SBOMSpecVersion); err != nil {
		return nil, fmt.Errorf("failed to encode the SBOM: %w", err)
	}
	return b.Bytes(), nil
}

// DecodeSBOM parses CycloneDX JSON.
func DecodeSBOM(data []byte) (*cdx.BOM, error) {
	bom := new(cdx.BOM)
	if err := cdx.NewBOMDecoder(bytes.NewReader(data), cdx.BOMFileFormatJSON).Decode(bom); err != nil {
		return nil, fmt.Errorf("failed to decode %s: %w", SBOMFile, err)
	}
	return bom, nil
}

// parseChart reads the chart entry of a Chart.yaml at p in the bundle.
func parseChart(p string, data []byte) (ChartEntry, error) {
	var c struct {
		Name       string `json:"name"`
		Version    string `json:"version"`
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		return ChartEntry{}, fmt.Errorf("failed to parse %s: %w", p, err)
	}
	if c.Name == "" || c.Version == "" {
		return ChartEntry{}, fmt.Errorf("%s lacks name or version, which every chart has", p)
	}
	return ChartEntry{Path: path.Dir(p), Name: c.Name, Version: c.Version, AppVersion: c.AppVersion}, nil
}
