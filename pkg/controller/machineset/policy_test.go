package machineset

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"k8c.io/machine-controller/sdk/apis/cluster/common"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// testMachine returns a Machine created age seconds after t0, with a Node.
func testMachine(name string, age int, mods ...func(*clusterv1alpha1.Machine)) *clusterv1alpha1.Machine {
	m := &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{
		Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(age) * time.Second)),
	}}
	m.Status.NodeRef = &corev1.ObjectReference{Name: name}
	for _, mod := range mods {
		mod(m)
	}
	return m
}

func TestMachinesToDelete(t *testing.T) {
	failed := func(m *clusterv1alpha1.Machine) { m.Status.ErrorReason = ptr.To(common.CreateMachineError) }
	annotated := func(m *clusterv1alpha1.Machine) {
		m.Annotations = map[string]string{AnnotationDeleteMachine: "yes"}
	}
	noNode := func(m *clusterv1alpha1.Machine) { m.Status.NodeRef = nil }
	machines := []*clusterv1alpha1.Machine{
		testMachine("c", 3), testMachine("a", 1), testMachine("e", 5), testMachine("b", 2), testMachine("d", 4),
	}
	for _, tc := range []struct {
		name     string
		machines []*clusterv1alpha1.Machine
		n        int
		policy   clusterv1alpha1.MachineSetDeletePolicy
		want     []string
	}{
		{name: "newest", machines: machines, n: 2, policy: clusterv1alpha1.NewestMachineSetDeletePolicy, want: []string{"e", "d"}},
		{name: "oldest", machines: machines, n: 2, policy: clusterv1alpha1.OldestMachineSetDeletePolicy, want: []string{"a", "b"}},
		{name: "random orders by UID", machines: machines, n: 3, policy: clusterv1alpha1.RandomMachineSetDeletePolicy, want: []string{"a", "b", "c"}},
		{name: "empty policy is random", machines: machines, n: 1, want: []string{"a"}},
		{name: "more than there are", machines: machines[:2], n: 5, policy: clusterv1alpha1.OldestMachineSetDeletePolicy, want: []string{"a", "c"}},
		{name: "none", machines: machines, n: 0},
		{
			name: "annotated, failed and Node-less first",
			machines: []*clusterv1alpha1.Machine{
				testMachine("old", 1), testMachine("nonode", 2, noNode), testMachine("failed", 3, failed), testMachine("marked", 4, annotated), testMachine("new", 5),
			},
			n: 4, policy: clusterv1alpha1.NewestMachineSetDeletePolicy, want: []string{"marked", "failed", "nonode", "new"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, m := range machinesToDelete(tc.machines, tc.n, tc.policy) {
				got = append(got, m.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
