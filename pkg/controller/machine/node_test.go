package machine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

func TestSyncNode(t *testing.T) {
	machine := &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns", UID: "uid-1"}}
	machine.Spec.Labels = map[string]string{"pool": "a"}
	machine.Spec.Annotations = map[string]string{"note": "x"}
	machine.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	synced := func() *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        "n",
				Labels:      map[string]string{"pool": "a", LabelOwnedBy: "uid-1", "other": "kept"},
				Annotations: map[string]string{"note": "x", AnnotationMachine: "ns/m"},
			},
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{
				{Key: "kept", Effect: corev1.TaintEffectNoExecute},
				{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
			}},
		}
	}
	for _, tc := range []struct {
		name        string
		node        func() *corev1.Node
		wantChanged bool
	}{
		{name: "already in sync", node: synced},
		{name: "bare Node", wantChanged: true, node: func() *corev1.Node {
			n := synced()
			n.Labels = map[string]string{"other": "kept"}
			n.Annotations = nil
			n.Spec.Taints = n.Spec.Taints[:1]
			return n
		}},
		{name: "taint with another value replaced", wantChanged: true, node: func() *corev1.Node {
			n := synced()
			n.Spec.Taints[1].Value = "cpu"
			return n
		}},
		{name: "label overwritten back", wantChanged: true, node: func() *corev1.Node {
			n := synced()
			n.Labels["pool"] = "b"
			return n
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := tc.node()
			if got := syncNode(node, machine); got != tc.wantChanged {
				t.Errorf("changed = %v, want %v", got, tc.wantChanged)
			}
			if diff := cmp.Diff(synced(), node); diff != "" {
				t.Errorf("Node (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFindNode(t *testing.T) {
	node := func(name, providerID, ip string) *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.NodeSpec{ProviderID: providerID},
			Status:     corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}},
		}
	}
	owned := func(n *corev1.Node, uid string) *corev1.Node {
		n.Labels = map[string]string{LabelOwnedBy: uid}
		return n
	}
	addrs := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.9"}, {Type: corev1.NodeExternalIP, Address: "10.0.1.9"}}
	for _, tc := range []struct {
		name       string
		nodes      []ctrlruntimeclient.Object
		providerID string
		want       string
	}{
		{name: "by providerID, case-insensitive", providerID: "kubevirt://VM-1",
			nodes: []ctrlruntimeclient.Object{node("a", "", "10.0.0.9"), node("b", "kubevirt://vm-1", "10.0.0.2")}, want: "b"},
		{name: "by address", providerID: "kubevirt://vm-1",
			nodes: []ctrlruntimeclient.Object{node("b", "kubevirt://vm-2", "10.0.0.2"), node("a", "", "10.0.0.9")}, want: "a"},
		{name: "none", providerID: "kubevirt://vm-1", nodes: []ctrlruntimeclient.Object{node("b", "kubevirt://vm-2", "10.0.0.2")}},
		{name: "owned by another Machine", providerID: "kubevirt://vm-1",
			nodes: []ctrlruntimeclient.Object{owned(node("b", "kubevirt://vm-1", "10.0.0.9"), "uid-2")}},
		{name: "owned by this Machine", providerID: "kubevirt://vm-1",
			nodes: []ctrlruntimeclient.Object{owned(node("b", "kubevirt://vm-1", "10.0.0.9"), "uid-1")}, want: "b"},
		{name: "by address, the first by name", providerID: "kubevirt://vm-1",
			nodes: []ctrlruntimeclient.Object{node("c", "", "10.0.0.9"), node("b", "", "10.0.0.9"), node("a", "", "10.0.0.2")}, want: "b"},
		{name: "by address, skipping a Node owned by another Machine", providerID: "kubevirt://vm-1",
			nodes: []ctrlruntimeclient.Object{owned(node("a", "", "10.0.0.9"), "uid-2"), node("b", "", "10.0.0.9")}, want: "b"},
		{name: "by its second address", providerID: "kubevirt://vm-1",
			nodes: []ctrlruntimeclient.Object{node("b", "", "10.0.1.9"), node("a", "", "10.0.0.3")}, want: "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := findNode(t.Context(), newFakeClient(t, tc.nodes...), "uid-1", tc.providerID, addrs)
			if err != nil {
				t.Fatal(err)
			}
			name := ""
			if got != nil {
				name = got.Name
			}
			if name != tc.want {
				t.Errorf("found %q, want %q", name, tc.want)
			}
		})
	}
}
