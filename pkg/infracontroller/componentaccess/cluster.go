package componentaccess

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/queue"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// ClusterControllerName names the controller of the cluster-wide access
// objects in logs and metrics (named like ControllerName).
const ClusterControllerName = "csi-access-cluster"

// clusterRequest is the only request of the ClusterReconciler: every event
// recomputes the subjects of every profile from all tenant namespaces.
var clusterRequest = reconcile.Request{NamespacedName: types.NamespacedName{Name: "cluster-wide"}}

// ClusterReconciler keeps, for every profile with ClusterRules, one
// ClusterRole and one ClusterRoleBinding whose subjects are the profile's
// ServiceAccounts of all live tenant namespaces. When no tenant namespace
// is live, both are deleted, so nothing of ours is left behind.
type ClusterReconciler struct {
	// Reader reads Namespaces, ClusterRoles and ClusterRoleBindings; the
	// manager's cache, selecting the latter two by Managed.
	Reader ctrlruntimeclient.Reader
	// Writer writes the objects.
	Writer ctrlruntimeclient.Writer
	// APIReader reads, uncached, an object in the way of a Create, to
	// tell ours (a cache behind our own write) from a foreign one.
	APIReader ctrlruntimeclient.Reader
	// Tenants recognises tenant namespaces.
	Tenants tenant.Matcher
	// Profiles are the profiles; those without ClusterRules are skipped.
	Profiles []Profile
	// Recorder records a Warning event on an object in the way of ours;
	// SetupWithManager sets the manager's when nil.
	Recorder events.EventRecorder
}

// SetupWithManager registers the controller.
func (r *ClusterReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := r.Tenants.Validate(); err != nil {
		return err
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(ClusterControllerName)
	}
	one := handler.EnqueueRequestsFromMapFunc(func(context.Context, ctrlruntimeclient.Object) []reconcile.Request {
		return []reconcile.Request{clusterRequest}
	})
	ours := builder.WithPredicates(predicate.NewPredicateFuncs(func(obj ctrlruntimeclient.Object) bool {
		return slices.ContainsFunc(r.Profiles, func(p Profile) bool { return p.ClusterObjectName() == obj.GetName() })
	}))
	err := ctrl.NewControllerManagedBy(mgr).
		Named(ClusterControllerName).
		Watches(&corev1.Namespace{}, one, builder.WithPredicates(r.Tenants.NamespacePredicate())).
		Watches(&rbacv1.ClusterRole{}, one, ours).
		Watches(&rbacv1.ClusterRoleBinding{}, one, ours).
		WithOptions(controller.Options{RateLimiter: queue.RateLimiter(0)}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("failed to set up the %s controller: %w", ClusterControllerName, err)
	}
	return nil
}

// Reconcile brings the cluster-wide objects of every profile up to date.
func (r *ClusterReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	namespaces, err := r.Tenants.List(ctx, r.Reader)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("failed to list the tenant namespaces: %w", err)
	}
	slices.Sort(namespaces)
	var errs []error
	for _, p := range r.Profiles {
		if len(p.ClusterRules) == 0 {
			continue
		}
		if len(namespaces) == 0 {
			errs = append(errs, r.remove(ctx, clusterRoleBinding(p, nil)), r.remove(ctx, clusterRole(p)))
			continue
		}
		errs = append(errs,
			ensure(ctx, r.Reader, r.APIReader, r.Writer, r.Recorder, clusterRole(p)),
			ensure(ctx, r.Reader, r.APIReader, r.Writer, r.Recorder, clusterRoleBinding(p, namespaces)))
	}
	return reconcile.Result{}, errors.Join(errs...)
}

// remove deletes obj when it exists and is ours.
func (r *ClusterReconciler) remove(ctx context.Context, obj ctrlruntimeclient.Object) error {
	return tenant.Target(r.Reader, r.APIReader, r.Writer).GetAndDelete(ctx, ctrlruntimeclient.ObjectKeyFromObject(obj), obj,
		"a cluster-wide access object: no tenant namespace is left")
}

func clusterMeta(p Profile) metav1.ObjectMeta {
	return meta("", p.ClusterObjectName())
}

func clusterRole(p Profile) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: clusterMeta(p), Rules: p.ClusterRules}
}

// clusterRoleBinding binds the profile's ServiceAccount of every namespace
// to its ClusterRole.
func clusterRoleBinding(p Profile, namespaces []string) *rbacv1.ClusterRoleBinding {
	b := &rbacv1.ClusterRoleBinding{
		ObjectMeta: clusterMeta(p),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: p.ClusterObjectName()},
	}
	for _, ns := range namespaces {
		b.Subjects = append(b.Subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: p.Name})
	}
	return b
}
