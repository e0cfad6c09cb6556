package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    *Configuration
		wantErr string
	}{
		{
			name: "values and skip",
			content: `apiVersion: installer.kubevirt-kkp.io/v1alpha1
kind: InstallerConfiguration
skip: [multus]
values:
  kubevirt:
    useEmulation: true
    workloads:
      nodePlacement:
        nodeSelector: {kvm: "true"}
`,
			want: &Configuration{
				APIVersion: APIVersion, Kind: Kind, Skip: []string{"multus"},
				Values: map[string]map[string]any{"kubevirt": {
					"useEmulation": true,
					"workloads":    map[string]any{"nodePlacement": map[string]any{"nodeSelector": map[string]any{"kvm": "true"}}},
				}},
			},
		},
		{name: "unknown field", content: "apiVersion: installer.kubevirt-kkp.io/v1alpha1\nkind: InstallerConfiguration\nvalue: {}\n", wantErr: `unknown field "value"`},
		{name: "wrong kind", content: "apiVersion: v1\nkind: ConfigMap\n", wantErr: "is a v1 ConfigMap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Load(writeFile(t, tt.content))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestLayering(t *testing.T) {
	cfg := New()
	cfg.Merge("kubevirt", map[string]any{"infra": map[string]any{"replicas": 3, "nodePlacement": map[string]any{"nodeSelector": map[string]any{"a": "b"}}}})
	cfg.Merge("kubevirt", map[string]any{"infra": map[string]any{"replicas": 2}})
	if err := cfg.Set("kubevirt.useEmulation=true,cdi.insecureRegistries={reg.local:5000}"); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]any{
		"kubevirt": {"useEmulation": true, "infra": map[string]any{"replicas": 2, "nodePlacement": map[string]any{"nodeSelector": map[string]any{"a": "b"}}}},
		"cdi":      {"insecureRegistries": []any{"reg.local:5000"}},
	}
	if diff := cmp.Diff(want, cfg.Values); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if v, ok := cfg.Lookup("kubevirt", "infra", "nodePlacement", "nodeSelector"); !ok || !cmp.Equal(v, map[string]any{"a": "b"}) {
		t.Errorf("Lookup = %v, %t", v, ok)
	}
	if err := cfg.Set("useEmulation=true"); err == nil {
		t.Error("a --set without a component was accepted")
	}
	if err := cfg.Validate([]string{"kubevirt"}); err == nil || !strings.Contains(err.Error(), `unknown component "cdi"`) {
		t.Errorf("Validate: %v", err)
	}
}

// TestValidateReportsEveryProblem: unknown components and malformed KVM node
// labels are all reported at once.
func TestValidateReportsEveryProblem(t *testing.T) {
	cfg := New()
	cfg.Skip = []string{"kubevirt-csi"}
	cfg.Values["cdii"] = map[string]any{}
	cfg.KVMNodeLabels = []string{"kvm", "bad key=true", "ok.example.com/kvm=yes!", "good.example.com/kvm=true"}
	err := cfg.Validate([]string{"kubevirt", "cdi"})
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		`skip: unknown component "kubevirt-csi"`, `values: unknown component "cdii"`,
		`kvmNodeLabels (--kvm-node-label): "kvm" is not key=value`,
		`"bad key=true" is not a valid node label: name part must consist of`,
		`"ok.example.com/kvm=yes!" is not a valid node label: a valid label must be`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "good.example.com") {
		t.Errorf("a valid label was refused:\n%v", err)
	}
}
