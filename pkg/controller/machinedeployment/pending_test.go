package machinedeployment

import (
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestPending(t *testing.T) {
	set := func(name string, generation, observed int64) *clusterv1alpha1.MachineSet {
		return &clusterv1alpha1.MachineSet{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Generation: generation},
			Status:     clusterv1alpha1.MachineSetStatus{ObservedGeneration: observed},
		}
	}
	deleting := set("gone", 3, 2)
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	for _, tc := range []struct {
		name    string
		created string
		patched *clusterv1alpha1.MachineSet
		seen    []*clusterv1alpha1.MachineSet
		age     time.Duration
		want    bool
	}{
		{name: "nothing pending, statuses current", seen: []*clusterv1alpha1.MachineSet{set("a", 2, 2)}, want: true},
		{name: "status behind its spec", seen: []*clusterv1alpha1.MachineSet{set("a", 2, 1)}},
		{name: "status behind, but being deleted", seen: []*clusterv1alpha1.MachineSet{deleting}, want: true},
		{name: "creation not seen", created: "b", seen: []*clusterv1alpha1.MachineSet{set("a", 1, 1)}},
		{name: "creation seen", created: "b", seen: []*clusterv1alpha1.MachineSet{set("a", 1, 1), set("b", 1, 1)}, want: true},
		{name: "patch not seen", patched: set("a", 3, 2), seen: []*clusterv1alpha1.MachineSet{set("a", 2, 2)}},
		{name: "patch seen", patched: set("a", 3, 2), seen: []*clusterv1alpha1.MachineSet{set("a", 3, 3)}, want: true},
		{name: "expired", created: "b", age: 2 * pendingTTL, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPending()
			now := t0
			p.now = func() time.Time { return now }
			if tc.created != "" {
				p.created(mdKey, tc.created)
			}
			if tc.patched != nil {
				p.patched(mdKey, tc.patched)
			}
			now = now.Add(tc.age)
			if got := p.synced(mdKey, tc.seen); got != tc.want {
				t.Errorf("synced = %v, want %v", got, tc.want)
			}
			if _, ok := p.items[mdKey]; ok && tc.want {
				t.Error("records kept once seen")
			}
		})
	}
}
