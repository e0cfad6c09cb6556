package imagebuild

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/kubevirt-kkp/kkp-kubevirt/charts"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/registrytest"
)

// TestPackagedChartsPinOurImages: the packaged machine-controller chart
// runs the image by digest, in its values and in values.yaml with its
// comments; a chart whose values do not name the image is refused.
func TestPackagedChartsPinOurImages(t *testing.T) {
	pinned := "registry.example/kkp/machine-controller:v0.1.0@sha256:" + strings.Repeat("c", 64)
	files, err := PackageCharts(charts.FS, map[string]map[string]string{
		"machine-controller": {"ghcr.io/kubevirt-kkp/machine-controller:v0.1.0": pinned},
	}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	ch, err := loader.LoadArchive(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := ch.Values["images"].(map[string]any)["controller"]; got != pinned {
		t.Errorf("images.controller is %v, want %s", got, pinned)
	}
	for _, raw := range ch.Raw {
		if raw.Name == "values.yaml" && (!strings.Contains(string(raw.Data), "controller: "+pinned) || !strings.HasPrefix(string(raw.Data), "#")) {
			t.Errorf("values.yaml is not pinned with its comments kept:\n%s", raw.Data)
		}
	}
	_, err = PackageCharts(charts.FS, map[string]map[string]string{
		"machine-controller": {"ghcr.io/kubevirt-kkp/machine-controller:v9.9.9": pinned},
	}, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "does not reference ghcr.io/kubevirt-kkp/machine-controller:v9.9.9") {
		t.Errorf("a version the chart does not name: %v", err)
	}
}

// TestPushCharts: a packaged chart pushed through Helm's registry client
// is at oci://REPOSITORY/<chart>:<version> under the digest returned.
func TestPushCharts(t *testing.T) {
	reg := registrytest.Start(t)
	files, err := PackageCharts(charts.FS, map[string]map[string]string{
		"infra-controller": {"ghcr.io/kubevirt-kkp/infra-controller:v0.1.0": reg.Host + "/kkp/infra-controller:v0.1.0@sha256:" + strings.Repeat("d", 64)},
	}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	refs, err := PushCharts(files, "oci://"+reg.Host+"/kkp/charts", created, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 1 || !strings.HasPrefix(refs[0], "oci://"+reg.Host+"/kkp/charts/infra-controller:0.1.0@sha256:") {
		t.Fatalf("pushed %v", refs)
	}
	want, err := name.NewDigest(strings.Replace(strings.TrimPrefix(refs[0], "oci://"), ":0.1.0@", "@", 1))
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(want.Context().Tag("0.1.0"))
	if err != nil {
		t.Fatalf("the chart is not in the registry: %v", err)
	}
	if desc.Digest.String() != want.DigestStr() {
		t.Errorf("the registry has %s, the push returned %s", desc.Digest, want.DigestStr())
	}
}
