package networks

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzParseNetworks checks that no ConfigMap entry makes ParseNetworks
// panic and that every network it accepts has a valid name and a JSON
// object with type or plugins as its configuration.
func FuzzParseNetworks(f *testing.F) {
	f.Add("storage", `{"cniVersion":"1.0.0","type":"bridge"}`)
	f.Add("multi", `{"plugins":[{"type":"bridge"}]}`)
	f.Add("bad name", `[]`)
	f.Fuzz(func(t *testing.T, name, config string) {
		nets, err := ParseNetworks(&corev1.ConfigMap{Data: map[string]string{name: config}})
		if err != nil && len(nets) > 0 {
			t.Fatalf("ParseNetworks returned %d networks with the error %v for a single entry", len(nets), err)
		}
		for _, n := range nets {
			if errs := validation.IsDNS1123Subdomain(n.Name); len(errs) > 0 {
				t.Errorf("accepted name %q: %v", n.Name, errs)
			}
			var obj map[string]any
			if err := json.Unmarshal([]byte(n.Config), &obj); err != nil {
				t.Errorf("accepted a configuration that is not a JSON object: %v", err)
			}
			_, hasType := obj["type"]
			_, hasPlugins := obj["plugins"]
			if !hasType && !hasPlugins {
				t.Errorf("accepted a configuration without type or plugins: %s", n.Config)
			}
		}
	})
}
