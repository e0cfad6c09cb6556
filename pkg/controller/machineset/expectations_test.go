package machineset

import (
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestExpectations(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "ms"}
	m := func(name string, deleting bool) clusterv1alpha1.Machine {
		out := clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)}}
		if deleting {
			out.DeletionTimestamp = &metav1.Time{Time: t0}
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		created []string
		deleted []types.UID
		seen    []clusterv1alpha1.Machine
		age     time.Duration
		want    bool
	}{
		{name: "nothing expected", want: true},
		{name: "creation not seen", created: []string{"a", "b"}, seen: []clusterv1alpha1.Machine{m("a", false)}},
		{name: "creations seen", created: []string{"a", "b"}, seen: []clusterv1alpha1.Machine{m("a", false), m("b", false)}, want: true},
		{name: "deletion not seen", deleted: []types.UID{"uid-a"}, seen: []clusterv1alpha1.Machine{m("a", false)}},
		{name: "deletion seen as deleting", deleted: []types.UID{"uid-a"}, seen: []clusterv1alpha1.Machine{m("a", true)}, want: true},
		{name: "deletion seen as gone", deleted: []types.UID{"uid-a"}, want: true},
		{name: "expired", created: []string{"a"}, age: 2 * expectationTTL, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newExpectations()
			now := t0
			e.now = func() time.Time { return now }
			if tc.created != nil || tc.deleted != nil {
				e.expect(key, tc.created, tc.deleted)
			}
			now = now.Add(tc.age)
			if got := e.satisfied(key, tc.seen); got != tc.want {
				t.Errorf("satisfied = %v, want %v", got, tc.want)
			}
			if tc.want {
				if _, ok := e.items[key]; ok {
					t.Error("satisfied expectations are kept")
				}
			}
		})
	}
}
