package netpol

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzParseCustom checks that no ConfigMap entry makes ParseCustom panic
// and that every policy it accepts is named validly, lives in the
// ConfigMap's namespace and carries our labels.
func FuzzParseCustom(f *testing.F) {
	f.Add("allow-lb", "podSelector: {}\ningress:\n- ports: [{port: 443}]\n")
	f.Add("deny", `{"policyTypes":["Egress"]}`)
	f.Add("x", "podSelector: 3")
	f.Fuzz(func(t *testing.T, name, spec string) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-a", Name: ConfigMapName}, Data: map[string]string{name: spec}}
		policies, err := ParseCustom(cm)
		if err != nil && len(policies) > 0 {
			t.Fatalf("ParseCustom returned %d policies with the error %v for a single entry", len(policies), err)
		}
		for _, p := range policies {
			if errs := validation.IsDNS1123Subdomain(p.Name); len(errs) > 0 {
				t.Errorf("accepted name %q: %v", p.Name, errs)
			}
			if p.Namespace != "cluster-a" || p.Labels[Label] != LabelCustom {
				t.Errorf("accepted policy %s/%s with labels %v", p.Namespace, p.Name, p.Labels)
			}
		}
	})
}
