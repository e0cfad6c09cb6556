package helm

import (
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
)

func testChart() *chart.Chart {
	return &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: "demo", Version: "0.1.0", AppVersion: "v1.0.0"},
		Values:   map[string]any{"replicas": 1},
		Templates: []*chart.File{{
			Name: "templates/cm.yaml",
			Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\n  namespace: {{ .Release.Namespace }}\ndata:\n  replicas: {{ .Values.replicas | quote }}\n"),
		}},
		Files: []*chart.File{{
			Name: "crds/demo.yaml",
			Data: []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: demos.example.com\n"),
		}},
	}
}

func TestRenderPutsCRDsFirst(t *testing.T) {
	out, err := Render(testChart(), "demo", "space", map[string]any{"replicas": 3}, "v1.36.0")
	if err != nil {
		t.Fatal(err)
	}
	crd := strings.Index(out, "kind: CustomResourceDefinition")
	cm := strings.Index(out, "kind: ConfigMap")
	if crd < 0 || cm < 0 || crd > cm {
		t.Errorf("CRD at %d, ConfigMap at %d:\n%s", crd, cm, out)
	}
	if !strings.Contains(out, `replicas: "3"`) || !strings.Contains(out, "namespace: space") {
		t.Errorf("values or namespace not applied:\n%s", out)
	}
	if _, err := Render(testChart(), "demo", "space", nil, "not-a-version"); err == nil {
		t.Error("a bad Kubernetes version was accepted")
	}
}

func TestUnchanged(t *testing.T) {
	base := func() *release.Release {
		return &release.Release{
			Info:     &release.Info{Status: release.StatusDeployed},
			Chart:    testChart(),
			Manifest: "a",
			Config:   map[string]any{"replicas": 3, "nested": map[string]any{"on": true}},
		}
	}
	tests := []struct {
		name   string
		modify func(current, planned *release.Release)
		want   bool
	}{
		{"identical, numbers typed differently", func(c, _ *release.Release) { c.Config["replicas"] = float64(3) }, true},
		{"failed release", func(c, _ *release.Release) { c.Info.Status = release.StatusFailed }, false},
		{"new chart version", func(_, p *release.Release) { p.Chart = testChart(); p.Chart.Metadata.Version = "0.2.0" }, false},
		{"new manifest", func(_, p *release.Release) { p.Manifest = "b" }, false},
		{"new values", func(_, p *release.Release) { p.Config["replicas"] = 4 }, false},
		{"values removed", func(_, p *release.Release) { p.Config = nil }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			current, planned := base(), base()
			tt.modify(current, planned)
			got, err := Unchanged(current, planned)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Unchanged = %t, want %t", got, tt.want)
			}
		})
	}
}
