package vlan

import (
	"context"
	"errors"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/queue"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/networks"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantcluster"
)

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "tenant-vlans"

// DefaultReleaseRecheck is how often a claim of a deleted TenantCluster
// whose namespace is still there is checked again: VMs, VMIs and the end of
// a namespace's termination send no event this controller watches.
const DefaultReleaseRecheck = 5 * time.Second

// CacheByObject returns what the manager's cache must select for this
// controller: only the claims in the claim namespace. The
// NetworkAttachmentDefinitions come with networks.CacheByObject.
func CacheByObject(o Options) map[ctrlruntimeclient.Object]cache.ByObject {
	return map[ctrlruntimeclient.Object]cache.ByObject{
		&coordinationv1.Lease{}: {
			Namespaces: map[string]cache.Config{o.ClaimNamespace: {}},
			Label:      labels.SelectorFromSet(labels.Set{tenant.ManagedByLabel: tenant.ManagedByValue}),
		},
	}
}

// Reconciler claims, records and releases the VLAN of each TenantCluster
// and keeps its NetworkAttachmentDefinition. A request names a
// TenantCluster, which may be gone.
type Reconciler struct {
	// Reader reads TenantClusters, Namespaces, claims and
	// NetworkAttachmentDefinitions: the manager's cache set up with
	// CacheByObject and networks.CacheByObject.
	Reader ctrlruntimeclient.Reader
	// APIReader reads uncached: the claims of a TenantCluster the cache
	// shows none for (it may lag behind our own Create), the object in
	// the way of a Create, and the VMs and VMIs that may use an id.
	APIReader ctrlruntimeclient.Reader
	// Writer writes claims, NetworkAttachmentDefinitions and the status
	// of TenantClusters.
	Writer ctrlruntimeclient.Client
	// Recorder records the events of TenantClusters; SetupWithManager sets
	// it when nil.
	Recorder events.EventRecorder
	// Tenants gives the namespace prefix.
	Tenants tenant.Matcher
	// Options are the operator's template and range.
	Options Options
	// ReleaseRecheck is how often a claim waiting to be released is
	// checked again; DefaultReleaseRecheck when 0.
	ReleaseRecheck time.Duration
}

// SetupWithManager registers the controller. It needs the TenantCluster
// types in the manager's scheme.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := r.Tenants.Validate(); err != nil {
		return err
	}
	if err := r.Options.Validate(); err != nil {
		return err
	}
	if !r.Options.Enabled() {
		return errors.New("the VLAN controller needs a template")
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(ControllerName)
	}
	nad := &unstructured.Unstructured{}
	nad.SetGroupVersionKind(networks.NetworkAttachmentDefinitionGVK)
	ours := predicate.NewPredicateFuncs(func(obj ctrlruntimeclient.Object) bool {
		return obj.GetLabels()[networks.Label] == LabelValue
	})
	err := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&infrav1alpha1.TenantCluster{}).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(ownerRequest)).
		Watches(nad, handler.EnqueueRequestsFromMapFunc(ownerRequest), builder.WithPredicates(ours)).
		Watches(&coordinationv1.Lease{}, handler.EnqueueRequestsFromMapFunc(r.claimRequests)).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Options.workers(), RateLimiter: queue.RateLimiter(0)}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("failed to set up the %s controller: %w", ControllerName, err)
	}
	return nil
}

// ownerRequest maps an object to the TenantCluster its owner label names.
func ownerRequest(_ context.Context, obj ctrlruntimeclient.Object) []reconcile.Request {
	owner := obj.GetLabels()[tenantcluster.OwnerLabel]
	if owner == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: owner}}}
}

// claimRequests maps a claim to its holder and to every TenantCluster
// without a VLAN, which may get the id when the claim is deleted.
func (r *Reconciler) claimRequests(ctx context.Context, obj ctrlruntimeclient.Object) []reconcile.Request {
	reqs := ownerRequest(ctx, obj)
	var list infrav1alpha1.TenantClusterList
	if err := r.Reader.List(ctx, &list); err != nil {
		return reqs
	}
	for i := range list.Items {
		if !meta.IsStatusConditionTrue(list.Items[i].Status.Conditions, infrav1alpha1.ConditionVLANReady) {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: list.Items[i].Name}})
		}
	}
	return reqs
}

// Reconcile claims the VLAN of one TenantCluster and writes its network,
// or releases the claims of a TenantCluster that is gone.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	claims, err := r.claimsOf(ctx, r.Reader, req.Name)
	if err != nil {
		return reconcile.Result{}, err
	}
	var tc infrav1alpha1.TenantCluster
	if err := r.Reader.Get(ctx, req.NamespacedName, &tc); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("failed to get TenantCluster %s: %w", req.Name, err)
		}
		return r.release(ctx, claims)
	}
	namespace := r.Tenants.Prefix + tc.Spec.ID
	var mine, stale []claim
	for _, c := range claims {
		if c.namespace == namespace {
			mine = append(mine, c)
		} else {
			stale = append(stale, c)
		}
	}
	// A claim of another namespace is left from an earlier TenantCluster
	// of this name.
	result, relErr := r.release(ctx, stale)
	if !tc.DeletionTimestamp.IsZero() {
		// The claim outlives the TenantCluster: it is released once the
		// namespace, and with it every VM, is gone.
		return result, relErr
	}
	if err := r.reconcileNormal(ctx, &tc, namespace, mine); err != nil {
		return reconcile.Result{}, errors.Join(relErr, err)
	}
	return result, relErr
}

// claimsOf returns the claims held by the TenantCluster named owner.
func (r *Reconciler) claimsOf(ctx context.Context, reader ctrlruntimeclient.Reader, owner string) ([]claim, error) {
	var list coordinationv1.LeaseList
	err := reader.List(ctx, &list, ctrlruntimeclient.InNamespace(r.Options.ClaimNamespace),
		ctrlruntimeclient.MatchingLabels{tenantcluster.OwnerLabel: owner, tenant.ManagedByLabel: tenant.ManagedByValue})
	if err != nil {
		return nil, fmt.Errorf("failed to list the VLAN claims of TenantCluster %s: %w", owner, err)
	}
	return decodeClaims(list.Items), nil
}
