package storageclass

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantconn"
)

// ControllerName names the controller in logs and metrics.
const ControllerName = "storageclasses"

// Options configures storage-class initialization.
type Options struct {
	// Bus is the default disk bus of tenant classes; DefaultBus when empty.
	Bus string
	// DisableVolumeExpansion keeps allowVolumeExpansion off on every
	// tenant class (for a CSI controller without its resizer); otherwise
	// a tenant class allows expansion when its infra class does.
	DisableVolumeExpansion bool
	// Snapshots makes a tenant VolumeSnapshotClass for every tenant class
	// whose infra class names an infra VolumeSnapshotClass in
	// SnapshotClassAnnotation, in tenant clusters that serve
	// VolumeSnapshotClasses.
	Snapshots bool
	// ResyncInterval, when positive, re-checks every tenant cluster that
	// often. It is only a safety net: the managed tenant classes are
	// watched, so hand edits are undone within seconds without it.
	ResyncInterval time.Duration
}

// Reconciler syncs the storage classes of one tenant cluster per request.
type Reconciler struct {
	// Reader reads infra Namespaces, Secrets and StorageClasses; the
	// manager's cache.
	Reader ctrlruntimeclient.Reader
	// Tenants recognises tenant namespaces.
	Tenants tenant.Matcher
	// Options configures the controller.
	Options Options
	// Events, when set, records the installation of snapshot CRDs in a
	// tenant cluster (with Options.Snapshots); the log has it either way.
	Events EventSink
	// Access reaches the tenant clusters; it is shared with the other
	// reconcilers that talk to them and must map TenantKinds and watch
	// WatchedKinds.
	Access *tenantconn.Access

	crds crdChecks
}

// TenantKinds are the kinds the controller reads and writes in tenant
// clusters.
func TenantKinds() []tenantconn.Kind {
	return []tenantconn.Kind{{GVK: storagev1.SchemeGroupVersion.WithKind("StorageClass")}, {GVK: SnapshotClassGVK}, {GVK: CRDGVK}}
}

// WatchedKinds are the kinds of tenant objects whose changes the
// controller hears of.
func WatchedKinds() []ctrlruntimeclient.Object {
	return []ctrlruntimeclient.Object{&storagev1.StorageClass{}}
}

// SetupWithManager registers the controller: tenant Namespaces, infra
// StorageClasses (fanned out to every tenant), kubeconfig Secrets and the
// managed StorageClasses of the tenant clusters, through Access.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := r.Tenants.Validate(); err != nil {
		return err
	}
	if r.Access == nil {
		return fmt.Errorf("the %s controller needs the tenant access", ControllerName)
	}
	changes, err := r.Access.Watches.Subscribe(&storagev1.StorageClass{})
	if err != nil {
		return fmt.Errorf("failed to subscribe the %s controller to tenant StorageClasses: %w", ControllerName, err)
	}
	secretName := r.Access.SecretName
	err = r.Tenants.NamespaceController(mgr, ControllerName, 4).
		Watches(&storagev1.StorageClass{}, r.Tenants.EnqueueAll(r.Reader)).
		Watches(&corev1.Secret{}, r.Tenants.EnqueueOwnNamespace(), builder.WithPredicates(
			predicate.NewPredicateFuncs(func(obj ctrlruntimeclient.Object) bool { return obj.GetName() == secretName }))).
		WatchesRawSource(changes).
		Complete(r)
	if err != nil {
		return fmt.Errorf("failed to set up the %s controller: %w", ControllerName, err)
	}
	return nil
}

// Reconcile brings the storage classes of one tenant cluster in line with
// the annotated infra classes.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	namespace, tenantClient, err := r.Access.Tenant(ctx, r.Reader, r.Tenants, req)
	if err != nil || tenantClient == nil {
		r.crds.forget(req.Name)
		return reconcile.Result{}, err
	}
	var infra storagev1.StorageClassList
	if err := r.Reader.List(ctx, &infra); err != nil {
		return reconcile.Result{}, fmt.Errorf("failed to list infra storage classes: %w", err)
	}
	desired, err := Desired(infra.Items, r.Options)
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := syncClasses(ctx, tenantClient, desired); err != nil {
		return reconcile.Result{}, fmt.Errorf("failed to sync the storage classes of the tenant cluster of %s: %w", namespace, err)
	}
	if r.Options.Snapshots {
		if err := r.syncSnapshots(ctx, namespace, tenantClient, infra.Items); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{RequeueAfter: max(r.Options.ResyncInterval, 0)}, nil
}

// syncSnapshots installs the snapshot CRDs the tenant cluster of namespace
// lacks and then keeps its VolumeSnapshotClasses. A failed installation
// (a tenant kubeconfig without rights on CRDs, say) is returned but does
// not keep the VolumeSnapshotClasses from a cluster that serves them.
func (r *Reconciler) syncSnapshots(ctx context.Context, namespace string, c ctrlruntimeclient.Client, infra []storagev1.StorageClass) error {
	var crdErr error
	if err := r.ensureCRDs(ctx, namespace, c); err != nil {
		crdErr = fmt.Errorf("failed to install the snapshot CRDs in the tenant cluster of %s: %w", namespace, err)
	}
	desired, err := DesiredSnapshotClasses(infra, r.Options)
	if err != nil {
		return errors.Join(crdErr, err)
	}
	served, err := syncSnapshotClasses(ctx, c, desired)
	if err != nil {
		return errors.Join(crdErr, fmt.Errorf("failed to sync the VolumeSnapshotClasses of the tenant cluster of %s: %w", namespace, err))
	}
	if !served {
		// Its CRD was there but serves no v1, or went since the check:
		// check again next time.
		r.crds.forget(namespace)
	}
	return crdErr
}

// RunningWatches returns the number of tenant clusters being watched.
func (r *Reconciler) RunningWatches() int {
	return r.Access.Watches.Running()
}

// syncClasses creates, updates, recreates and deletes tenant classes; classes
// without our label are never touched.
func syncClasses(ctx context.Context, c ctrlruntimeclient.Client, desired []storagev1.StorageClass) error {
	var list storagev1.StorageClassList
	if err := c.List(ctx, &list); err != nil {
		return fmt.Errorf("failed to list storage classes: %w", err)
	}
	have := map[string]*storagev1.StorageClass{}
	for i := range list.Items {
		have[list.Items[i].Name] = &list.Items[i]
	}
	want := map[string]bool{}
	var errs []error
	for i := range desired {
		w := &desired[i]
		want[w.Name] = true
		errs = append(errs, syncOne(ctx, c, have[w.Name], w))
	}
	for name, h := range have {
		if !want[name] {
			errs = append(errs, tenant.Target(c, c, c).Delete(ctx, h, "a StorageClass no longer wanted"))
		}
	}
	return errors.Join(errs...)
}

// syncOne writes want with package apply, recreating our class when a
// field an update may not change differs; have is the class of want's
// name, nil when there is none.
func syncOne(ctx context.Context, c ctrlruntimeclient.Client, have, want *storagev1.StorageClass) error {
	if have != nil && tenant.IsManaged(have) && needsRecreate(have, want) {
		if err := tenant.Target(c, c, c).Delete(ctx, have, "a StorageClass to recreate with a field an update may not change"); err != nil {
			return err
		}
		have = nil
	}
	_, err := tenant.Target(c, c, c).Known(ctx, have, written(want))
	return err
}

// written returns want as it is written: a class that does not allow
// volume expansion says so, so that allowing it by hand is a difference
// that is taken back.
func written(want *storagev1.StorageClass) *storagev1.StorageClass {
	out := want.DeepCopy()
	if out.AllowVolumeExpansion == nil {
		out.AllowVolumeExpansion = ptr.To(false)
	}
	return out
}
