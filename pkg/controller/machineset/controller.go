package machineset

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/coreevents"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/coalesce"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/ownership"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/queue"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ControllerName names the controller and its events.
const ControllerName = "machineset-controller"

// Options configure the MachineSet controller.
type Options struct {
	// Queue holds the number of workers and the retry backoff.
	Queue queue.Options
	// StatusWindow is how long, after a reconcile wrote a MachineSet, the
	// changes of its Machines and their Nodes wait before they reconcile
	// it again, so that a burst of them costs one status write per window
	// (see package coalesce): coalesce.DefaultWindow when 0, no wait when
	// negative. Changes of the MachineSet itself reconcile at once.
	StatusWindow time.Duration
}

// reconciler reconciles MachineSets.
type reconciler struct {
	client       ctrlruntimeclient.Client
	recorder     events.EventRecorder
	expectations *expectations
	window       *coalesce.Window
}

// Add registers the MachineSet controller with mgr.
func Add(mgr ctrl.Manager, opts Options) error {
	r := newReconciler(mgr.GetClient(), coreevents.For(mgr, ControllerName), opts.StatusWindow)
	owner := handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &clusterv1alpha1.MachineSet{}, handler.OnlyControllerOwner())
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&clusterv1alpha1.MachineSet{}, builder.WithPredicates(coalesce.OwnerChanged)).
		Watches(&clusterv1alpha1.Machine{}, r.window.Handler(owner)).
		Watches(&clusterv1alpha1.Machine{}, handler.EnqueueRequestsFromMapFunc(r.setsForOrphan)).
		Watches(&corev1.Node{}, r.window.Handler(handler.EnqueueRequestsFromMapFunc(r.setOfNode)), builder.WithPredicates(nodeReadinessChanged)).
		WithOptions(opts.Queue.Controller()).
		Complete(r)
}

func newReconciler(c ctrlruntimeclient.Client, recorder events.EventRecorder, window time.Duration) *reconciler {
	return &reconciler{client: c, recorder: recorder, expectations: newExpectations(), window: coalesce.New(window)}
}

// Reconcile implements reconcile.Reconciler.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ms := &clusterv1alpha1.MachineSet{}
	if err := r.client.Get(ctx, req.NamespacedName, ms); err != nil {
		r.expectations.forget(req.NamespacedName)
		r.window.Forget(req.NamespacedName)
		return reconcile.Result{}, ctrlruntimeclient.IgnoreNotFound(err)
	}
	defer r.window.Track(ms, int(ptr.Deref(ms.Spec.Replicas, 0)))()
	if ms.DeletionTimestamp != nil {
		// The garbage collector deletes the Machines it owns.
		return reconcile.Result{}, nil
	}
	selector, err := selectorOf(ms)
	if err != nil {
		return reconcile.Result{}, r.refuse(ctx, ms, err)
	}
	// The Machines are the cache's own, not copies (a reconcile of a set of
	// 1000 would copy 1000 Machines): nothing here modifies them, adopt
	// copies the one it patches.
	all := &clusterv1alpha1.MachineList{}
	if err := r.client.List(ctx, all, ctrlruntimeclient.InNamespace(ms.Namespace), ctrlruntimeclient.MatchingLabelsSelector{Selector: selector},
		ctrlruntimeclient.UnsafeDisableDeepCopy); err != nil {
		return reconcile.Result{}, fmt.Errorf("failed to list Machines: %w", err)
	}
	if !r.expectations.satisfied(req.NamespacedName, all.Items) {
		// The events of the pending creations and deletions enqueue it again.
		return reconcile.Result{}, nil
	}
	owned, err := r.adopt(ctx, ms, all.Items)
	if err != nil {
		return reconcile.Result{}, err
	}
	scaleErr := r.scale(ctx, ms, owned)
	res, statusErr := r.updateStatus(ctx, ms, owned)
	return res, errors.Join(scaleErr, statusErr)
}

// selectorOf returns the MachineSet's selector. An empty selector, or one
// its template does not match, is an error: the MachineSet would adopt
// everything, or create Machines forever.
func selectorOf(ms *clusterv1alpha1.MachineSet) (labels.Selector, error) {
	return ownership.Selector(&ms.Spec.Selector, ms.Spec.Template.Labels)
}

// adopt makes the MachineSet the controller of matching Machines without
// one and returns the Machines it controls. machines may be the cache's
// own: a Machine is copied before it is changed.
func (r *reconciler) adopt(ctx context.Context, ms *clusterv1alpha1.MachineSet, machines []clusterv1alpha1.Machine) ([]*clusterv1alpha1.Machine, error) {
	var owned []*clusterv1alpha1.Machine
	for i := range machines {
		m := &machines[i]
		ref := metav1.GetControllerOf(m)
		if ref == nil && m.DeletionTimestamp == nil {
			base := m
			m = m.DeepCopy()
			m.OwnerReferences = append(m.OwnerReferences, controllerRef(ms))
			if err := r.client.Patch(ctx, m, ctrlruntimeclient.MergeFromWithOptions(base, ctrlruntimeclient.MergeFromWithOptimisticLock{})); err != nil {
				return nil, fmt.Errorf("failed to adopt Machine %s: %w", m.Name, err)
			}
			ref = metav1.GetControllerOf(m)
		}
		if ref != nil && ref.UID == ms.UID {
			owned = append(owned, m)
		}
	}
	return owned, nil
}

// scale creates or deletes Machines until spec.replicas are not being
// deleted.
func (r *reconciler) scale(ctx context.Context, ms *clusterv1alpha1.MachineSet, owned []*clusterv1alpha1.Machine) error {
	key := types.NamespacedName{Namespace: ms.Namespace, Name: ms.Name}
	active := activeMachines(owned)
	diff := int(ptr.Deref(ms.Spec.Replicas, 1)) - len(active)
	var errs []error
	switch {
	case diff > 0:
		created := make([]string, 0, diff)
		for range diff {
			m := newMachine(ms)
			if err := r.client.Create(ctx, m); err != nil {
				errs = append(errs, fmt.Errorf("failed to create a Machine: %w", err))
				continue
			}
			created = append(created, m.Name)
		}
		r.expectations.expect(key, created, nil)
	case diff < 0:
		victims := machinesToDelete(active, -diff, clusterv1alpha1.MachineSetDeletePolicy(ms.Spec.DeletePolicy))
		deleted := make([]types.UID, 0, len(victims))
		for _, m := range victims {
			if err := r.client.Delete(ctx, m); ctrlruntimeclient.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("failed to delete Machine %s: %w", m.Name, err))
				continue
			}
			deleted = append(deleted, m.UID)
		}
		r.expectations.expect(key, nil, deleted)
	}
	return errors.Join(errs...)
}

// activeMachines returns the Machines not being deleted.
func activeMachines(machines []*clusterv1alpha1.Machine) []*clusterv1alpha1.Machine {
	var out []*clusterv1alpha1.Machine
	for _, m := range machines {
		if m.DeletionTimestamp == nil {
			out = append(out, m)
		}
	}
	return out
}

// newMachine returns a Machine of the MachineSet's template.
func newMachine(ms *clusterv1alpha1.MachineSet) *clusterv1alpha1.Machine {
	t := ms.Spec.Template.DeepCopy()
	return &clusterv1alpha1.Machine{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    ms.Name + "-",
			Namespace:       ms.Namespace,
			Labels:          t.Labels,
			Annotations:     t.Annotations,
			OwnerReferences: []metav1.OwnerReference{controllerRef(ms)},
		},
		Spec: t.Spec,
	}
}

// controllerRef is the owner reference of a MachineSet's Machines.
func controllerRef(ms *clusterv1alpha1.MachineSet) metav1.OwnerReference {
	return ownership.ControllerRef("MachineSet", ms)
}

// setsForOrphan enqueues the MachineSets of a Machine's namespace whose
// selector matches it, for a Machine without controller.
func (r *reconciler) setsForOrphan(ctx context.Context, obj ctrlruntimeclient.Object) []reconcile.Request {
	return ownership.OrphanRequests(ctx, r.client, obj, &clusterv1alpha1.MachineSetList{}, selectorOf)
}
