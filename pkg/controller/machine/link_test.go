package machine

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
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
			if wantPoll := tc.wantNode == ""; wantPoll != (res.RequeueAfter == pollNoWatch) {
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

// With a providerID known before creation, the patch that adds the
// finalizers of a Machine about to get its instance also sets
// spec.providerID, so linking its Node patches the Machine no more. A
// Machine that already has its finalizers (its instance may be an older
// controller's) still takes its Node's.
func TestProviderIDBeforeCreation(t *testing.T) {
	for _, tc := range []struct {
		name        string
		finalizers  []string
		nodeID      string
		wantMachine string
		// wantPatches counts the Machine patches of both reconciles.
		wantPatches int
	}{
		{name: "new Machine", nodeID: "kubevirt://m-1", wantMachine: "kubevirt://m-1", wantPatches: 1},
		{
			name: "Machine of an older controller", finalizers: []string{FinalizerDelete, FinalizerNodeDelete},
			nodeID: "kubermatic://kubevirt/uid-1", wantMachine: "kubermatic://kubevirt/uid-1", wantPatches: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMachine()
			m.Finalizers = tc.finalizers
			patches := 0
			f := newFixture(t)
			f.client = newFakeClientWith(t, interceptor.Funcs{
				Patch: func(ctx context.Context, c ctrlruntimeclient.WithWatch, obj ctrlruntimeclient.Object, patch ctrlruntimeclient.Patch, opts ...ctrlruntimeclient.PatchOption) error {
					if _, ok := obj.(*clusterv1alpha1.Machine); ok {
						patches++
					}
					return c.Patch(ctx, obj, patch, opts...)
				},
			}, m)
			f.r.client, f.r.secrets = f.client, &bootstrapSecrets{direct: f.client}
			f.r.providerID = func(m *clusterv1alpha1.Machine) string { return "kubevirt://" + m.Name }
			if _, err := f.reconcile(); err != nil {
				t.Fatal(err)
			}
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}, Spec: corev1.NodeSpec{ProviderID: tc.nodeID},
				Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}}}}
			if err := f.client.Create(t.Context(), node); err != nil {
				t.Fatal(err)
			}
			if _, err := f.reconcile(); err != nil {
				t.Fatal(err)
			}
			got := f.machine()
			if got.Status.NodeRef == nil {
				t.Fatal("the Node is not linked")
			}
			if diff := cmp.Diff(tc.wantMachine, ptr.Deref(got.Spec.ProviderID, "")); diff != "" {
				t.Errorf("Machine spec.providerID (-want +got):\n%s", diff)
			}
			if patches != tc.wantPatches {
				t.Errorf("%d Machine patches, want %d", patches, tc.wantPatches)
			}
		})
	}
}
