package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"testing/fstest"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/bundle"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
)

// fixedImage is an image whose content, and so digest, depends only on its
// arguments.
func fixedImage(t *testing.T, content, arch, variant string) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, static.NewLayer([]byte(content), types.OCILayer))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Variant = "linux", arch, variant
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		t.Fatal(err)
	}
	return img
}

// fixedBundle writes a bundle of fixed images and charts, so that its SBOM
// is the same on every run.
func fixedBundle(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "fixed.tar")
	_, err := bundle.Create(t.Context(), bundle.CreateOptions{
		Output: file, Platforms: []string{"linux/amd64", "linux/arm64"},
		Charts: fstest.MapFS{
			"kubevirt/Chart.yaml":              {Data: []byte("apiVersion: v2\nname: kubevirt\nversion: 1.9.0\nappVersion: v1.9.0\n")},
			"kubevirt/charts/crds/Chart.yaml":  {Data: []byte("apiVersion: v2\nname: kubevirt-crds\nversion: 1.9.0\n")},
			"kubevirt/templates/operator.yaml": {Data: []byte("kind: Deployment\n")},
		},
		Images: []mirror.Item{
			{
				Ref: "quay.io/kubevirt/virt-operator:v1.9.0", Image: fixedImage(t, "virt-operator", "amd64", ""),
				Referrers: []mirror.Item{{Ref: "quay.io/kubevirt/virt-operator:sha256-0123.sig", Image: fixedImage(t, "signature", "amd64", "")}},
			},
			{Ref: "ghcr.io/k8snetworkplumbingwg/multus-cni:v4.3.0-thick", Image: fixedImage(t, "multus", "arm64", "v8")},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return file
}

// TestBundleInspectGolden prints a fixed bundle's SBOM as a table and as
// the CycloneDX document it stores.
func TestBundleInspectGolden(t *testing.T) {
	file := fixedBundle(t)
	table, err := execute(t, "bundle", "inspect", file)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "bundle-inspect.golden", table)
	doc, err := execute(t, "bundle", "inspect", file, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		BOMFormat   string `json:"bomFormat"`
		SpecVersion string `json:"specVersion"`
		Components  []struct {
			Type string `json:"type"`
		} `json:"components"`
	}
	if err := json.Unmarshal([]byte(doc), &parsed); err != nil {
		t.Fatalf("-o json is not JSON: %v\n%s", err, doc)
	}
	if parsed.BOMFormat != "CycloneDX" || len(parsed.Components) != 4 {
		t.Errorf("-o json: format %q with %d components, want CycloneDX with 2 images and 2 charts", parsed.BOMFormat, len(parsed.Components))
	}
	checkGolden(t, "bundle-inspect-json.golden", doc)
}
