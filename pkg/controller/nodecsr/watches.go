package nodecsr

import (
	"context"
	"fmt"
	"maps"
	"sync"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Cache indexes.
const (
	// indexMachineNode indexes Machines by status.nodeRef.name.
	indexMachineNode = "nodecsr.machine.status.nodeRef.name"
	// indexCSRNode indexes kubelet serving requests by the node of their
	// requestor.
	indexCSRNode = "nodecsr.csr.requestor.node"
)

// addIndexes registers the cache indexes the approver reads by.
func addIndexes(ctx context.Context, mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &clusterv1alpha1.Machine{}, indexMachineNode, func(o ctrlruntimeclient.Object) []string {
		if m, ok := o.(*clusterv1alpha1.Machine); ok && m.Status.NodeRef != nil && m.Status.NodeRef.Name != "" {
			return []string{m.Status.NodeRef.Name}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("failed to index Machines by node: %w", err)
	}
	if err := idx.IndexField(ctx, &certificatesv1.CertificateSigningRequest{}, indexCSRNode, func(o ctrlruntimeclient.Object) []string {
		csr, ok := o.(*certificatesv1.CertificateSigningRequest)
		if !ok || csr.Spec.SignerName != certificatesv1.KubeletServingSignerName {
			return nil
		}
		if node := RequestorNode(csr.Spec.Username); node != "" {
			return []string{node}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("failed to index CertificateSigningRequests by node: %w", err)
	}
	return nil
}

// kubeletServing passes the requests of signer kubernetes.io/kubelet-serving
// only: client certificates (kube-apiserver-client-kubelet) are never
// looked at.
var kubeletServing = predicate.NewPredicateFuncs(func(o ctrlruntimeclient.Object) bool {
	csr, ok := o.(*certificatesv1.CertificateSigningRequest)
	return ok && csr.Spec.SignerName == certificatesv1.KubeletServingSignerName
})

// machineChanged passes Machine creations and the updates of what Decide
// reads: the nodeRef, the addresses, the controller label and annotations,
// the deletion.
var machineChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		a, okA := e.ObjectOld.(*clusterv1alpha1.Machine)
		b, okB := e.ObjectNew.(*clusterv1alpha1.Machine)
		if !okA || !okB {
			return true
		}
		return !apiequality.Semantic.DeepEqual(a.Status.NodeRef, b.Status.NodeRef) ||
			!apiequality.Semantic.DeepEqual(a.Status.Addresses, b.Status.Addresses) ||
			!maps.Equal(a.Labels, b.Labels) || !maps.Equal(a.Annotations, b.Annotations) ||
			a.DeletionTimestamp.IsZero() != b.DeletionTimestamp.IsZero()
	},
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// pendingOfMachine enqueues the undecided kubelet serving requests of the
// node a changed Machine names.
func pendingOfMachine(c ctrlruntimeclient.Reader) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o ctrlruntimeclient.Object) []reconcile.Request {
		m, ok := o.(*clusterv1alpha1.Machine)
		if !ok || m.Status.NodeRef == nil || m.Status.NodeRef.Name == "" {
			return nil
		}
		list := &certificatesv1.CertificateSigningRequestList{}
		if err := c.List(ctx, list, ctrlruntimeclient.MatchingFields{indexCSRNode: m.Status.NodeRef.Name}, ctrlruntimeclient.UnsafeDisableDeepCopy); err != nil {
			return nil
		}
		var out []reconcile.Request
		for i := range list.Items {
			if !decided(&list.Items[i]) {
				out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: list.Items[i].Name}})
			}
		}
		return out
	})
}

// reported remembers, per request, the last reason recorded for it, so
// that deciding again (every change of its Machine) records a reason once.
type reported struct {
	mu   sync.Mutex
	last map[string]reportedReason
}

type reportedReason struct {
	uid    types.UID
	reason string
}

func newReported() *reported {
	return &reported{last: map[string]reportedReason{}}
}

// first reports whether d's reason is new for csr, and remembers it.
func (r *reported) first(csr *certificatesv1.CertificateSigningRequest, d Decision) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := reportedReason{uid: csr.UID, reason: d.Reason}
	if r.last[csr.Name] == now {
		return false
	}
	r.last[csr.Name] = now
	return true
}

// forget drops what was remembered of the request called name.
func (r *reported) forget(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.last, name)
}
