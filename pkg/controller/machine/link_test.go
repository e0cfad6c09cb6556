package machine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// The infra cache may lag behind the user cluster: a Node whose providerID
// names the VM is linked before the instance reports an address.
func TestReconcileLinksByProviderIDWithoutAddress(t *testing.T) {
	for _, tc := range []struct {
		name       string
		providerID string
		wantNode   string
	}{
		{name: "Node of the VM", providerID: "kubevirt://m-1", wantNode: "node-1"},
		{name: "Node of another VM", providerID: "kubevirt://m-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMachine()
			m.Finalizers = []string{FinalizerDelete, FinalizerNodeDelete}
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}, Spec: corev1.NodeSpec{ProviderID: tc.providerID}}
			f := newFixture(t, m, node)
			f.provider.instances["m-1"] = &fakeInstance{name: "m-1"}
			res, err := f.reconcile()
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if ref := f.machine().Status.NodeRef; ref != nil {
				got = ref.Name
			}
			if diff := cmp.Diff(tc.wantNode, got); diff != "" {
				t.Errorf("nodeRef (-want +got):\n%s", diff)
			}
			if wantPoll := tc.wantNode == ""; wantPoll != (res.RequeueAfter == pollWatched) {
				t.Errorf("requeue after %s; want the poll only without Node", res.RequeueAfter)
			}
		})
	}
}

// The controller gives a Node found by address the providerID of its VM,
// unless it has one, and the Machine its Node's providerID, once.
func TestReconcileSetsProviderIDs(t *testing.T) {
	addr := map[string]corev1.NodeAddressType{"10.0.0.1": corev1.NodeInternalIP}
	for _, tc := range []struct {
		name        string
		nodeID      string
		machineID   *string
		wantNode    string
		wantMachine string
	}{
		{name: "a Node without providerID gets the VM's", wantNode: "kubevirt://m-1", wantMachine: "kubevirt://m-1"},
		{name: "a Node of the old controller keeps its own", nodeID: "kubermatic://kubevirt/uid-1", wantNode: "kubermatic://kubevirt/uid-1", wantMachine: "kubermatic://kubevirt/uid-1"},
		{name: "a Machine's providerID is not replaced", machineID: ptr.To("set-before"), wantNode: "kubevirt://m-1", wantMachine: "set-before"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMachine()
			m.Finalizers = []string{FinalizerDelete, FinalizerNodeDelete}
			m.Spec.ProviderID = tc.machineID
			node := &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
				Spec:       corev1.NodeSpec{ProviderID: tc.nodeID},
				Status:     corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}}},
			}
			f := newFixture(t, m, node)
			f.provider.instances["m-1"] = &fakeInstance{name: "m-1", addresses: addr}
			for range 2 {
				if _, err := f.reconcile(); err != nil {
					t.Fatal(err)
				}
			}
			got := f.machine()
			if got.Status.NodeRef == nil {
				t.Fatal("the Node is not linked")
			}
			var gotNode corev1.Node
			if err := f.client.Get(t.Context(), ctrlruntimeclient.ObjectKey{Name: "node-1"}, &gotNode); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantNode, gotNode.Spec.ProviderID); diff != "" {
				t.Errorf("Node providerID (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantMachine, ptr.Deref(got.Spec.ProviderID, "")); diff != "" {
				t.Errorf("Machine spec.providerID (-want +got):\n%s", diff)
			}
		})
	}
}

// Setting spec.providerID patches the Machine mid-reconcile; the status the
// reconcile has built up (addresses, nodeRef) must still be written by the
// same reconcile.
func TestProviderIDPatchKeepsStatus(t *testing.T) {
	m := newMachine()
	m.Finalizers = []string{FinalizerDelete, FinalizerNodeDelete}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1"},
		Status:     corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}}},
	}
	f := newFixture(t, m, node)
	f.provider.instances["m-1"] = &fakeInstance{name: "m-1", addresses: map[string]corev1.NodeAddressType{"10.0.0.1": corev1.NodeInternalIP}}
	if _, err := f.reconcile(); err != nil {
		t.Fatal(err)
	}
	got := f.machine()
	if got.Spec.ProviderID == nil || got.Status.NodeRef == nil {
		t.Fatalf("providerID %v, nodeRef %v after one reconcile; want both", got.Spec.ProviderID, got.Status.NodeRef)
	}
	want := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}}
	if diff := cmp.Diff(want, got.Status.Addresses); diff != "" {
		t.Errorf("addresses after one reconcile (-want +got):\n%s", diff)
	}
}
