package flavors

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// ControllerName names the controller in logs and metrics.
const ControllerName = "flavors"

// DefaultWorkers is how many tenant namespaces are synced at once by
// default. A preset change costs every tenant namespace one write, and each
// reconcile spends most of its time waiting for it; with 8 workers the API
// server's CPU, not the workers, bounds how fast the change spreads (32
// workers measured no faster, see docs/benchmarks.md).
const DefaultWorkers = 8

// Reconciler syncs the flavors of one tenant namespace per request.
type Reconciler struct {
	// Reader reads namespaces and flavors; the manager's cache, so a
	// reconcile with nothing to do issues no request.
	Reader ctrlruntimeclient.Reader
	// Writer creates, applies and deletes flavors.
	Writer ctrlruntimeclient.Writer
	// APIReader reads, uncached, an object in the way of a Create, to
	// tell ours (a cache behind our own write) from a foreign one.
	APIReader ctrlruntimeclient.Reader
	// Tenants recognises tenant namespaces.
	Tenants tenant.Matcher
	// Options selects what is offered.
	Options Options

	// Recorder records a Warning event on an object in the way of ours;
	// SetupWithManager sets the manager's when nil.
	Recorder events.EventRecorder

	reconciles atomic.Uint64
	lister     lister
}

// Reconciles returns how many reconciles have finished, successful or not.
// Tests use it to know that a resync has run.
func (r *Reconciler) Reconciles() uint64 {
	return r.reconciles.Load()
}

// SetupWithManager registers the controller: tenant Namespaces, presets of
// the source namespace (fanned out to every tenant namespace) and the
// enabled kinds in tenant namespaces (to restore hand edits and deletions).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := r.Tenants.Validate(); err != nil {
		return err
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(ControllerName)
	}
	if r.Options.Presets && r.Tenants.IsTenant(r.Options.sourceNamespace()) {
		return fmt.Errorf("the preset source namespace %s must not be a tenant namespace", r.Options.sourceNamespace())
	}
	r.lister.reader = r.Reader
	workers := r.Options.MaxConcurrentReconciles
	if workers <= 0 {
		workers = DefaultWorkers
	}
	b := r.Tenants.NamespaceController(mgr, ControllerName, workers)
	if r.Options.Presets {
		source := r.Options.sourceNamespace()
		b = b.Watches(emptyObject(PresetGVK), r.Tenants.EnqueueAll(r.Reader),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(obj ctrlruntimeclient.Object) bool {
				return obj.GetNamespace() == source
			})))
	}
	for _, gvk := range allKinds {
		if r.Options.enabled()[gvk] {
			b = b.Watches(emptyObject(gvk), r.Tenants.EnqueueOwnNamespace(),
				builder.WithPredicates(r.Tenants.InTenantNamespace()))
		}
	}
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("failed to set up the %s controller: %w", ControllerName, err)
	}
	return nil
}

// Reconcile brings one tenant namespace to the desired flavors.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	defer r.reconciles.Add(1)
	namespace, live, err := r.Tenants.Live(ctx, r.Reader, req)
	if err != nil || !live {
		return reconcile.Result{}, err
	}
	o, err := r.namespaceOptions(ctx, namespace)
	if err != nil {
		return reconcile.Result{}, err
	}
	var sources []unstructured.Unstructured
	if o.Presets {
		if sources, err = r.lister.list(ctx, PresetGVK, o.sourceNamespace()); err != nil {
			return reconcile.Result{}, err
		}
	}
	desired := Desired(o, sources)
	var errs []error
	for _, gvk := range allKinds {
		if err := r.syncKind(ctx, namespace, gvk, desired[gvk]); err != nil {
			errs = append(errs, err)
		}
	}
	return reconcile.Result{}, errors.Join(errs...)
}

// namespaceOptions returns the options for one tenant namespace: the
// controller's, with the sets its TenantCluster switches off (recorded on
// the namespace) turned off.
func (r *Reconciler) namespaceOptions(ctx context.Context, namespace string) (Options, error) {
	var ns corev1.Namespace
	if err := r.Reader.Get(ctx, types.NamespacedName{Name: namespace}, &ns); err != nil {
		return Options{}, fmt.Errorf("failed to get namespace %s: %w", namespace, err)
	}
	cluster, err := infrav1alpha1.OptionsOf(ns.Annotations)
	if err != nil {
		return Options{}, fmt.Errorf("failed to read the options of namespace %s: %w", namespace, err)
	}
	o := r.Options
	o.Presets = o.Presets && !infrav1alpha1.Off(cluster.Presets)
	if infrav1alpha1.Off(cluster.Instancetypes) {
		o.Instancetypes, o.PerformanceInstancetypes, o.DensityInstancetypes = false, false, false
	}
	o.Preferences = o.Preferences && !infrav1alpha1.Off(cluster.Preferences)
	return o, nil
}

// syncKind writes the wanted objects of one kind into a tenant namespace
// with package apply and deletes ours no longer wanted. Objects without our
// label are left alone, even when their name is one we want.
func (r *Reconciler) syncKind(ctx context.Context, namespace string, gvk schema.GroupVersionKind, want map[string]*unstructured.Unstructured) error {
	existing, err := r.lister.list(ctx, gvk, namespace)
	if err != nil {
		return err
	}
	var errs []error
	have := make(map[string]*unstructured.Unstructured, len(existing))
	for i := range existing {
		obj := &existing[i]
		have[obj.GetName()] = obj
		if _, wanted := want[obj.GetName()]; !wanted && tenant.IsManaged(obj) {
			errs = append(errs, r.delete(ctx, obj))
		}
	}
	target := tenant.Target(r.Reader, r.APIReader, r.Writer)
	target.InTheWay = tenant.WarnInTheWay(r.Recorder, "CopyFlavors")
	for name, w := range want {
		obj := w.DeepCopy()
		obj.SetNamespace(namespace)
		if _, err := target.Known(ctx, have[name], obj); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// delete removes one of our objects, only if it is still the version the
// decision was made on.
func (r *Reconciler) delete(ctx context.Context, obj *unstructured.Unstructured) error {
	return tenant.Target(r.Reader, r.APIReader, r.Writer).Delete(ctx, obj, "a flavor no longer wanted",
		ctrlruntimeclient.Preconditions{UID: ptr(obj.GetUID()), ResourceVersion: ptr(obj.GetResourceVersion())})
}

func emptyObject(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

func ptr[T any](v T) *T { return &v }
