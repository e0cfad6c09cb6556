package machine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestNodeChanged(t *testing.T) {
	base := func() *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"a": "b"}},
			Spec:       corev1.NodeSpec{ProviderID: "kubevirt://n"},
			Status: corev1.NodeStatus{
				Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			},
		}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.Node)
		want   bool
	}{
		{name: "heartbeat only", mutate: func(n *corev1.Node) {
			n.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(time.Now())
			n.ResourceVersion = "2"
		}},
		{name: "not ready", want: true, mutate: func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }},
		{name: "label removed", want: true, mutate: func(n *corev1.Node) { delete(n.Labels, "a") }},
		{name: "providerID set", want: true, mutate: func(n *corev1.Node) { n.Spec.ProviderID = "kubevirt://m" }},
		{name: "taint removed by hand", want: true, mutate: func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: "x"}} }},
		{name: "address changed", want: true, mutate: func(n *corev1.Node) { n.Status.Addresses[0].Address = "10.0.0.2" }},
		{name: "cordoned", want: true, mutate: func(n *corev1.Node) { n.Spec.Unschedulable = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := base()
			tc.mutate(changed)
			if got := nodeChanged(base(), changed); got != tc.want {
				t.Errorf("nodeChanged = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMachinesOfNode: a Node event reaches its owner by label, else the
// Machine its KubeVirt providerID names, else the Machines without nodeRef
// sharing one of its addresses, and no other Machine.
func TestMachinesOfNode(t *testing.T) {
	machine := func(name, uid, address string, linked bool) *clusterv1alpha1.Machine {
		m := &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name, UID: types.UID(uid)}}
		if address != "" {
			m.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: address}}
		}
		if linked {
			m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: name}
		}
		return m
	}
	machines := []ctrlruntimeclient.Object{
		machine("m1", "uid-1", "10.0.0.1", false),
		machine("m2", "uid-2", "10.0.0.2", false),
		machine("m3", "uid-3", "10.0.0.2", true),
		machine("m4", "uid-4", "10.0.0.4", false),
	}
	c := newFakeClient(t, machines...)
	req := func(name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "kube-system", Name: name}}
	}
	for _, tc := range []struct {
		name string
		node *corev1.Node
		want []reconcile.Request
	}{
		{name: "owner label", want: []reconcile.Request{req("m3")}, node: &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{LabelOwnedBy: "uid-3"}},
			Spec:       corev1.NodeSpec{ProviderID: "kubevirt://m1"},
		}},
		{name: "KubeVirt providerID", want: []reconcile.Request{req("m1")}, node: &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "n"},
			Spec:       corev1.NodeSpec{ProviderID: "KubeVirt://m1"},
		}},
		{name: "addresses, unlinked Machines only", want: []reconcile.Request{req("m2"), req("m4")}, node: &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "n"},
			Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: "10.0.0.2"}, {Type: corev1.NodeExternalIP, Address: "10.0.0.4"},
				{Type: corev1.NodeHostName, Address: "10.0.0.2"},
			}},
		}},
		{name: "no address", node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, machinesOfNode(t.Context(), c, tc.node)); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}
