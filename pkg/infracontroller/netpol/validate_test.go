package netpol

import (
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// validationCase is one entry of testdata/policies.yaml.
type validationCase struct {
	Name string `json:"name"`
	// Error starts the message naming the refused field; empty for a
	// valid spec.
	Error string         `json:"error"`
	Spec  map[string]any `json:"spec"`
}

func loadValidationCases(t *testing.T) []validationCase {
	t.Helper()
	raw, err := os.ReadFile("testdata/policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []validationCase
	if err := yaml.UnmarshalStrict(raw, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestParseCustomValidates: every entry the API server would refuse is
// named with its field and left out, the valid ones in the same ConfigMap
// are kept. TestNetworkPolicyValidationMatchesAPIServer checks the same
// cases against a real API server.
func TestParseCustomValidates(t *testing.T) {
	cases := loadValidationCases(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-a", Name: ConfigMapName}, Data: map[string]string{}}
	for _, tc := range cases {
		spec, err := yaml.Marshal(tc.Spec)
		if err != nil {
			t.Fatal(err)
		}
		cm.Data[tc.Name] = string(spec)
	}
	policies, err := ParseCustom(cm)
	kept := map[string]bool{}
	for _, p := range policies {
		kept[p.Name] = true
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			if tc.Error == "" {
				if !kept[tc.Name] {
					t.Errorf("a valid policy was left out: %v", err)
				}
				if err != nil && strings.Contains(err.Error(), `policy "`+tc.Name+`"`) {
					t.Errorf("a valid policy was reported: %v", err)
				}
				return
			}
			if kept[tc.Name] {
				t.Error("an invalid policy was kept")
			}
			if want := `policy "` + tc.Name + `": ` + tc.Error; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v\ndoes not contain %q", err, want)
			}
		})
	}
}
