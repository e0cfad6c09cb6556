package coalesce

import (
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func TestOwnerChanged(t *testing.T) {
	base := func() *clusterv1alpha1.MachineSet {
		return &clusterv1alpha1.MachineSet{ObjectMeta: metav1.ObjectMeta{
			Name: "ms", Generation: 2, ResourceVersion: "10",
			Labels: map[string]string{"pool": "a"}, Annotations: map[string]string{"a": "1"},
			Finalizers:      []string{"f"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "MachineDeployment", Name: "md", UID: "u"}},
		}}
	}
	now := metav1.Now()
	for name, tc := range map[string]struct {
		change func(*clusterv1alpha1.MachineSet)
		want   bool
	}{
		"status alone": {func(ms *clusterv1alpha1.MachineSet) {
			ms.Status.Replicas, ms.ResourceVersion = 3, "11"
			ms.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "machineset-controller", Subresource: "status"}}
		}, false},
		"spec (generation)": {func(ms *clusterv1alpha1.MachineSet) { ms.Generation = 3 }, true},
		"label":             {func(ms *clusterv1alpha1.MachineSet) { ms.Labels["pool"] = "b" }, true},
		"annotation":        {func(ms *clusterv1alpha1.MachineSet) { ms.Annotations = nil }, true},
		"finalizer":         {func(ms *clusterv1alpha1.MachineSet) { ms.Finalizers = nil }, true},
		"owner":             {func(ms *clusterv1alpha1.MachineSet) { ms.OwnerReferences[0].UID = "v" }, true},
		"deletion":          {func(ms *clusterv1alpha1.MachineSet) { ms.DeletionTimestamp = &now }, true},
		"no generation": {func(ms *clusterv1alpha1.MachineSet) {
			ms.Generation = 0
			ms.Status.Replicas = 3
		}, true},
	} {
		t.Run(name, func(t *testing.T) {
			old, updated := base(), base()
			if name == "no generation" {
				old.Generation = 0
			}
			tc.change(updated)
			if got := OwnerChanged.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: updated}); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	if !OwnerChanged.Create(event.CreateEvent{Object: base()}) || !OwnerChanged.Delete(event.DeleteEvent{Object: base()}) {
		t.Error("a creation or deletion was dropped")
	}
}
