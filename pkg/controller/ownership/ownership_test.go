package ownership

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSelector(t *testing.T) {
	for _, tc := range []struct {
		name     string
		selector metav1.LabelSelector
		template map[string]string
		wantErr  string
	}{
		{name: "matching", selector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}, template: map[string]string{"a": "b", "c": "d"}},
		{name: "empty", template: map[string]string{"a": "b"}, wantErr: "spec.selector must not be empty"},
		{name: "not matching", selector: metav1.LabelSelector{MatchLabels: map[string]string{"a": "x"}}, template: map[string]string{"a": "b"},
			wantErr: "spec.selector does not match spec.template.metadata.labels"},
		{name: "invalid", selector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}},
			wantErr: "invalid spec.selector"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Selector(&tc.selector, tc.template)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Fatalf("error = %v, want prefix %q", err, tc.wantErr)
			}
		})
	}
}

func TestControllerRef(t *testing.T) {
	ref := ControllerRef("MachineSet", &metav1.ObjectMeta{Name: "ms-1", UID: "uid-1"})
	if ref.APIVersion != "cluster.k8s.io/v1alpha1" || ref.Kind != "MachineSet" || ref.Name != "ms-1" || ref.UID != "uid-1" ||
		ref.Controller == nil || !*ref.Controller || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("ControllerRef = %+v", ref)
	}
}
