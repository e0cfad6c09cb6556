package machine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
