package apply

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

func policy(cidr string) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{"a": "b"}},
		Spec: networkingv1.NetworkPolicySpec{
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
			Egress:      []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: cidr}}}}},
		},
	}
}

func desired(t *testing.T, obj *networkingv1.NetworkPolicy) *unstructured.Unstructured {
	t.Helper()
	u, err := Desired(obj, clientgoscheme.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestDesiredIsWhatIsApplied(t *testing.T) {
	u := desired(t, policy("10.0.0.0/8"))
	if u.GetAPIVersion() != "networking.k8s.io/v1" || u.GetKind() != "NetworkPolicy" {
		t.Errorf("type = %s %s, want networking.k8s.io/v1 NetworkPolicy", u.GetAPIVersion(), u.GetKind())
	}
	meta, _ := u.Object["metadata"].(map[string]any)
	if _, ok := meta["creationTimestamp"]; ok {
		t.Errorf("metadata keeps the server's creationTimestamp: %v", meta)
	}
	if _, ok := u.Object["status"]; ok {
		t.Error("the desired object has a status")
	}
	// An empty selector means "every pod" and must be sent.
	if sel, ok := u.Object["spec"].(map[string]any)["podSelector"]; !ok || len(sel.(map[string]any)) != 0 {
		t.Errorf("spec.podSelector = %v, want {}", sel)
	}
	if len(u.GetAnnotations()[HashAnnotation]) != 32 {
		t.Errorf("hash annotation = %q, want 32 hex digits", u.GetAnnotations()[HashAnnotation])
	}
}

func TestDesiredHash(t *testing.T) {
	a, again := desired(t, policy("10.0.0.0/8")), desired(t, policy("10.0.0.0/8"))
	if a.GetAnnotations()[HashAnnotation] != again.GetAnnotations()[HashAnnotation] {
		t.Error("equal desired objects hash differently")
	}
	// Hashing a desired object again ignores its own hash.
	rehashed, err := Desired(a, clientgoscheme.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	if rehashed.GetAnnotations()[HashAnnotation] != a.GetAnnotations()[HashAnnotation] {
		t.Error("a desired object hashes differently once it carries its hash")
	}
	changed := policy("10.0.0.0/8")
	delete(changed.Labels, "a")
	if desired(t, changed).GetAnnotations()[HashAnnotation] == a.GetAnnotations()[HashAnnotation] {
		t.Error("dropping a label keeps the hash")
	}
}

func TestDesiredRefusesIncompleteObjects(t *testing.T) {
	if _, err := Desired(&unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x"}}}, clientgoscheme.Scheme); err == nil {
		t.Error("an object without apiVersion and kind was accepted")
	}
	if _, err := Desired(&corev1.ConfigMap{}, clientgoscheme.Scheme); err == nil {
		t.Error("an object without a name was accepted")
	}
}

func TestHolds(t *testing.T) {
	want := desired(t, policy("10.0.0.0/8"))
	live := policy("10.0.0.0/8")
	live.Annotations = map[string]string{HashAnnotation: want.GetAnnotations()[HashAnnotation], "other": "x"}
	live.Labels["added-by-someone"] = "x"
	live.ResourceVersion, live.UID = "7", "u"
	tests := []struct {
		name string
		edit func(*networkingv1.NetworkPolicy)
		want bool
	}{
		{name: "fields of others and of the server do not count", edit: func(*networkingv1.NetworkPolicy) {}, want: true},
		{name: "a value we set changed by hand", edit: func(p *networkingv1.NetworkPolicy) {
			p.Spec.Egress[0].To[0].IPBlock.CIDR = "0.0.0.0/0"
		}, want: false},
		{name: "a label we set removed", edit: func(p *networkingv1.NetworkPolicy) { delete(p.Labels, "a") }, want: false},
		{name: "a list item added", edit: func(p *networkingv1.NetworkPolicy) {
			p.Spec.PolicyTypes = append(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress)
		}, want: false},
		{name: "no hash: written before, or by another writer", edit: func(p *networkingv1.NetworkPolicy) { p.Annotations = nil }, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := live.DeepCopy()
			tc.edit(obj)
			got, err := Holds(obj, want)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Holds = %t, want %t", got, tc.want)
			}
		})
	}
	// The desired object without the label: its hash changes, so the live
	// object that still has the label (and the old hash) does not hold it.
	dropped := policy("10.0.0.0/8")
	dropped.Labels = nil
	if got, _ := Holds(live, desired(t, dropped)); got {
		t.Error("a live object holds a desired object that no longer sets one of its fields")
	}
}

func TestContains(t *testing.T) {
	tests := []struct {
		name       string
		live, want any
		contains   bool
	}{
		{name: "equal scalars", live: "a", want: "a", contains: true},
		{name: "different scalars", live: "a", want: "b", contains: false},
		{name: "numbers of any decoding", live: int64(2), want: float64(2), contains: true},
		{name: "nested difference", live: map[string]any{"s": map[string]any{"n": int64(1)}}, want: map[string]any{"s": map[string]any{"n": int64(2)}}, contains: false},
		{name: "number and string", live: "2", want: int64(2), contains: false},
		{name: "extra live keys", live: map[string]any{"a": "1", "b": "2"}, want: map[string]any{"a": "1"}, contains: true},
		{name: "missing key", live: map[string]any{"b": "2"}, want: map[string]any{"a": "1"}, contains: false},
		{name: "empty map and absent", live: nil, want: map[string]any{}, contains: true},
		{name: "list of other length", live: []any{"a", "b"}, want: []any{"a"}, contains: false},
		{name: "list items compared as maps", live: []any{map[string]any{"a": "1", "d": "x"}}, want: []any{map[string]any{"a": "1"}}, contains: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Contains(tc.live, tc.want); got != tc.contains {
				t.Errorf("Contains(%v, %v) = %t, want %t", tc.live, tc.want, got, tc.contains)
			}
		})
	}
}
