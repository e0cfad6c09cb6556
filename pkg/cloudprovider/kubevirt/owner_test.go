package kubevirt

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOwnerName(t *testing.T) {
	refs := []metav1.OwnerReference{
		{APIVersion: "apps/v1", Kind: "MachineSet", Name: "wrong-group"},
		{APIVersion: "cluster.k8s.io/v1alpha1", Kind: "MachineDeployment", Name: "md"},
		{APIVersion: "cluster.k8s.io/v1alpha1", Kind: "MachineSet", Name: "ms"},
	}
	tests := []struct{ kind, want string }{
		{"MachineSet", "ms"},
		{"MachineDeployment", "md"},
		{"Machine", ""},
	}
	for _, tt := range tests {
		if got := ownerName(refs, tt.kind); got != tt.want {
			t.Errorf("ownerName(%s) = %q, want %q", tt.kind, got, tt.want)
		}
	}
	if got := ownerName(nil, "MachineSet"); got != "" {
		t.Errorf("no owners: got %q", got)
	}
}
