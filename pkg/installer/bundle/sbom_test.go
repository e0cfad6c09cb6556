package bundle

import (
	"bytes"
	"path"
	"path/filepath"
	"strings"
	"testing"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// sbomEntry is what the SBOM says of one component.
type sbomEntry struct {
	// Platform and Referrer list every such property, comma-separated.
	Kind, Name, Version, PURL, SHA256, Reference, Platform, Path, Referrer string
}

// appendValue appends v to a comma-separated list.
func appendValue(list, v string) string {
	if list == "" {
		return v
	}
	return list + "," + v
}

func sbomEntries(bom *cdx.BOM) []sbomEntry {
	var out []sbomEntry
	for _, c := range *bom.Components {
		e := sbomEntry{Name: c.Name, Version: c.Version, PURL: c.PackageURL}
		if c.Hashes != nil {
			e.SHA256 = (*c.Hashes)[0].Value
		}
		for _, p := range *c.Properties {
			switch p.Name {
			case PropertyKind:
				e.Kind = p.Value
			case PropertyReference:
				e.Reference = p.Value
			case PropertyPlatform:
				e.Platform = appendValue(e.Platform, p.Value)
			case PropertyReferrer:
				e.Referrer = appendValue(e.Referrer, p.Value)
			case PropertyPath:
				e.Path = p.Value
			}
		}
		out = append(out, e)
	}
	return out
}

func TestBuildSBOM(t *testing.T) {
	digest := "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	bom := BuildSBOM(Metadata{
		FormatVersion: FormatVersion, Platforms: []string{"linux/arm64", "linux/amd64"},
		Images: []ImageEntry{
			{Ref: "quay.io/kubevirt/virt-api:v1.9.0", Digest: digest, Platforms: []string{"linux/arm64/v8"}},
			{
				Ref: "quay.io/kubevirt/virt-handler:v1.9.0", Digest: digest, Platforms: []string{"linux/amd64", "linux/arm64/v8"},
				Referrers: []ReferrerEntry{{Ref: "quay.io/kubevirt/virt-handler:sha256-0123.sig", Digest: digest}},
			},
			{Ref: "registry.example.com:5000/team/tool@" + digest, Digest: digest},
		},
		Charts: []ChartEntry{{Path: "charts/kubevirt", Name: "kubevirt", Version: "1.9.0", AppVersion: "v1.9.0"}},
	})
	want := []sbomEntry{
		{
			Kind: KindImage, Name: "quay.io/kubevirt/virt-api", Version: "v1.9.0",
			PURL:   "pkg:oci/virt-api@sha256%3A0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef?arch=arm64&repository_url=quay.io%2Fkubevirt%2Fvirt-api&tag=v1.9.0",
			SHA256: digest[len("sha256:"):], Reference: "quay.io/kubevirt/virt-api:v1.9.0", Platform: "linux/arm64/v8",
		},
		{
			Kind: KindImage, Name: "quay.io/kubevirt/virt-handler", Version: "v1.9.0",
			PURL:   "pkg:oci/virt-handler@sha256%3A0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef?repository_url=quay.io%2Fkubevirt%2Fvirt-handler&tag=v1.9.0",
			SHA256: digest[len("sha256:"):], Reference: "quay.io/kubevirt/virt-handler:v1.9.0", Platform: "linux/amd64,linux/arm64/v8",
			Referrer: "quay.io/kubevirt/virt-handler:sha256-0123.sig",
		},
		{
			Kind: KindImage, Name: "registry.example.com:5000/team/tool",
			PURL:   "pkg:oci/tool@sha256%3A0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef?repository_url=registry.example.com%3A5000%2Fteam%2Ftool",
			SHA256: digest[len("sha256:"):], Reference: "registry.example.com:5000/team/tool@" + digest,
		},
		{Kind: KindChart, Name: "kubevirt", Version: "1.9.0", Path: "charts/kubevirt"},
	}
	if diff := cmp.Diff(want, sbomEntries(bom)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	data, err := EncodeSBOM(bom)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := DecodeSBOM(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, sbomEntries(decoded)); diff != "" {
		t.Errorf("after a JSON round trip (-want +got):\n%s", diff)
	}
	if decoded.BOMFormat != "CycloneDX" || decoded.SpecVersion != cdx.SpecVersion1_6 || decoded.SerialNumber != "" || decoded.Metadata.Timestamp != "" {
		t.Errorf("format %q %s, serial %q, timestamp %q: want CycloneDX 1.6 without serial or time",
			decoded.BOMFormat, decoded.SpecVersion, decoded.SerialNumber, decoded.Metadata.Timestamp)
	}
	if bytes.Contains(data, []byte(`\u0026`)) {
		t.Error("the package URLs' & is escaped")
	}
}

// TestCreatedBundleSBOM: a bundle's SBOM names every stored image with its
// digest and platform and every chart with its version, and is covered by
// checksums.txt.
func TestCreatedBundleSBOM(t *testing.T) {
	_, items := upstream(t)
	platforms := map[string]string{}
	for i, item := range items {
		cfg, err := item.Image.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		cfg = cfg.DeepCopy()
		cfg.OS, cfg.Architecture, cfg.Variant = "linux", "amd64", ""
		if i == 0 {
			cfg.Architecture, cfg.Variant = "arm64", "v8"
		}
		if items[i].Image, err = mutate.ConfigFile(item.Image, cfg); err != nil {
			t.Fatal(err)
		}
		platforms[item.Ref] = path.Join(cfg.OS, cfg.Architecture, cfg.Variant)
	}
	out := filepath.Join(t.TempDir(), "bundle.tar")
	if _, err := Create(t.Context(), CreateOptions{
		Output: out, Charts: testCharts, Images: items, Platforms: []string{"linux/amd64,linux/arm64"},
	}); err != nil {
		t.Fatal(err)
	}
	v, err := Verify(out)
	if err != nil {
		t.Fatal(err)
	}
	if v.SBOM == nil {
		t.Fatal("the bundle has no SBOM")
	}
	bom, err := DecodeSBOM(v.SBOM)
	if err != nil {
		t.Fatal(err)
	}
	var want []sbomEntry
	for _, img := range v.Metadata.Images {
		if strings.Join(img.Platforms, ",") != platforms[img.Ref] || len(img.Digest) != len("sha256:")+64 {
			t.Errorf("metadata of %s: platforms %q, digest %q; want platform %q and a sha256 digest", img.Ref, img.Platforms, img.Digest, platforms[img.Ref])
		}
		want = append(want, sbomEntry{Kind: KindImage, Reference: img.Ref, SHA256: img.Digest[len("sha256:"):], Platform: platforms[img.Ref]})
	}
	want = append(want, sbomEntry{Kind: KindChart, Name: "demo", Version: "0.1.0", Path: "charts/demo"})
	got := sbomEntries(bom)
	for i := range got {
		if got[i].Kind == KindImage {
			got[i].Name, got[i].Version, got[i].PURL = "", "", ""
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	checksums := readEntries(t, out)[0].data
	if sums, err := parseChecksums(bytesReader(checksums)); err != nil || sums[SBOMFile] != sumBytes(v.SBOM) {
		t.Errorf("checksums.txt does not list %s with its sha256 (%v)", SBOMFile, err)
	}
}
