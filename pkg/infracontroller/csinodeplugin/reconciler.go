package csinodeplugin

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/apply"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantconn"
)

// ControllerName is the name of the controller.
const ControllerName = "addons"

// LegacyInfraSecretName is the Secret with the driver's infra kubeconfig
// that earlier releases put into the tenant cluster's namespace
// kubevirt-csi-driver; it is deleted when it carries our label.
const LegacyInfraSecretName = "infra-cluster-credentials"

// driverNamespace is the namespace of the node plugin in tenant clusters.
const driverNamespace = "kubevirt-csi-driver"

// Options configures the addons controller.
type Options struct {
	// Images overrides the images of the manifests; empty ones keep the
	// defaults of package addons.
	Images addons.Params
	// ResyncInterval is how often each tenant cluster is re-applied, which
	// takes back hand edits there; 0 turns it off.
	ResyncInterval time.Duration
}

// Reconciler applies the addons to tenant clusters.
type Reconciler struct {
	// Reader reads Namespaces and the tenant kubeconfig Secrets, normally
	// from the manager's cache.
	Reader ctrlruntimeclient.Reader
	// Tenants recognises tenant namespaces.
	Tenants tenant.Matcher
	// Options configures the controller.
	Options Options
	// Access reaches the tenant clusters; it is shared with the other
	// reconcilers that talk to them and must map TenantKinds and watch
	// WatchedKinds.
	Access *tenantconn.Access
	// Recorder records a Warning event on the tenant Namespace for an
	// object of the tenant cluster in the way of ours; SetupWithManager
	// sets the manager's when nil.
	Recorder events.EventRecorder
}

// TenantKinds are the kinds the controller reads and writes in tenant
// clusters: those of the node plugin's manifests, and Secrets (the legacy
// infra credentials Secret is read too).
func TenantKinds() ([]tenantconn.Kind, error) {
	kinds, err := Kinds(addons.KubeVirtCSI)
	if err != nil {
		return nil, err
	}
	return append(kinds, tenantconn.Kind{GVK: corev1.SchemeGroupVersion.WithKind("Secret"), Namespaced: true}), nil
}

// WatchedKinds are the kinds of tenant objects whose changes (hand edits)
// the controller hears of: those of the node plugin's manifests.
func WatchedKinds() ([]ctrlruntimeclient.Object, error) {
	kinds, err := Kinds(addons.KubeVirtCSI)
	if err != nil {
		return nil, err
	}
	return watchedKinds(kinds)
}

// SetupWithManager registers the controller for tenant Namespaces, their
// kubeconfig Secrets and, through Access, the node plugin's objects in
// tenant clusters.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := r.Tenants.Validate(); err != nil {
		return err
	}
	if r.Access == nil {
		return fmt.Errorf("the %s controller needs the tenant access", ControllerName)
	}
	watched, err := WatchedKinds()
	if err != nil {
		return err
	}
	changes, err := r.Access.Watches.Subscribe(watched...)
	if err != nil {
		return fmt.Errorf("failed to subscribe the %s controller to its tenant objects: %w", ControllerName, err)
	}
	secretName := r.Access.SecretName
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(ControllerName)
	}
	err = r.Tenants.NamespaceController(mgr, ControllerName, 4).
		Watches(&corev1.Secret{}, r.Tenants.EnqueueOwnNamespace(), builder.WithPredicates(
			predicate.NewPredicateFuncs(func(obj ctrlruntimeclient.Object) bool { return obj.GetName() == secretName }))).
		WatchesRawSource(changes).
		Complete(r)
	if err != nil {
		return fmt.Errorf("failed to set up the %s controller: %w", ControllerName, err)
	}
	return nil
}

// Reconcile applies the addons to the tenant cluster of one namespace.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	namespace, c, err := r.Access.Tenant(ctx, r.Reader, r.Tenants, req)
	if err != nil || c == nil {
		return reconcile.Result{}, err
	}
	p := r.Options.Images
	p.ClusterID = strings.TrimPrefix(namespace, r.Tenants.Prefix)
	p.InfraNamespace = namespace
	reader, synced := r.Access.Watches.Reader(namespace)
	if !synced {
		// Only the watch cache tells ours from foreign objects without a
		// request per object; the watch queues this namespace once synced.
		log.FromContext(ctx).V(1).Info("waiting for the watch of the tenant cluster to sync")
		return reconcile.Result{}, nil
	}
	target := tenant.Target(reader, c, c)
	target.InTheWay = r.warnInTheWay(namespace)
	if err := Apply(ctx, target, addons.KubeVirtCSI, p); err != nil {
		return reconcile.Result{}, fmt.Errorf("failed to apply the addons to the tenant cluster of %s: %w", namespace, err)
	}
	if err := deleteLegacySecret(ctx, c); err != nil {
		return reconcile.Result{}, fmt.Errorf("failed to clean up the tenant cluster of %s: %w", namespace, err)
	}
	return reconcile.Result{RequeueAfter: max(r.Options.ResyncInterval, 0)}, nil
}

// RunningWatches returns the number of tenant clusters being watched.
func (r *Reconciler) RunningWatches() int {
	return r.Access.Watches.Running()
}

// Kinds returns the kinds the addon dir renders, each with the scope its
// manifests give it (an object without namespace is cluster-scoped).
func Kinds(dir string) ([]tenantconn.Kind, error) {
	objs, err := addons.Render(dir, addons.Params{ClusterID: "kinds", InfraNamespace: "kinds"})
	if err != nil {
		return nil, err
	}
	seen := map[schema.GroupVersionKind]bool{}
	var kinds []tenantconn.Kind
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		if !seen[gvk] {
			seen[gvk] = true
			kinds = append(kinds, tenantconn.Kind{GVK: gvk, Namespaced: obj.GetNamespace() != ""})
		}
	}
	return kinds, nil
}

// watchedKinds returns one typed object per kind, the kinds whose hand
// edits in tenant clusters the controller watches.
func watchedKinds(kinds []tenantconn.Kind) ([]ctrlruntimeclient.Object, error) {
	out := make([]ctrlruntimeclient.Object, 0, len(kinds))
	for _, k := range kinds {
		typed, err := clientgoscheme.Scheme.New(k.GVK)
		if err != nil {
			return nil, fmt.Errorf("failed to watch the addon kind %s: %w", k.GVK, err)
		}
		obj, ok := typed.(ctrlruntimeclient.Object)
		if !ok {
			return nil, fmt.Errorf("the addon kind %s is not an object", k.GVK)
		}
		out = append(out, obj)
	}
	return out, nil
}

// Apply renders the addon dir with p and writes every object to target
// (package apply), whose reader holds our objects of the addon's kinds (a
// cache). Objects it shows as rendered cost no request; foreign objects
// are left alone, and told to target.InTheWay.
func Apply(ctx context.Context, target apply.Target, dir string, p addons.Params) error {
	objs, err := addons.Render(dir, p)
	if err != nil {
		return err
	}
	return applyObjects(ctx, target, objs)
}

// warnInTheWay records objects of the tenant cluster in the way on the
// tenant Namespace, read from the cache only when one is; without it at
// hand (a cache behind), only the log says so.
func (r *Reconciler) warnInTheWay(namespace string) func(context.Context, string, ctrlruntimeclient.Object) {
	return func(ctx context.Context, kind string, obj ctrlruntimeclient.Object) {
		ns := &corev1.Namespace{}
		if err := r.Reader.Get(ctx, types.NamespacedName{Name: namespace}, ns); err == nil {
			tenant.WarnInTheWayOf(r.Recorder, ns, "ApplyCSINodePlugin")(ctx, kind, obj)
		}
	}
}

// applyObjects writes objs in order.
func applyObjects(ctx context.Context, target apply.Target, objs []*unstructured.Unstructured) error {
	for _, obj := range objs {
		if _, err := target.Object(ctx, obj); err != nil {
			return err
		}
	}
	return nil
}

// deleteLegacySecret deletes the infra kubeconfig Secret that earlier
// releases put into the tenant cluster, when it is ours.
func deleteLegacySecret(ctx context.Context, c ctrlruntimeclient.Client) error {
	return tenant.Target(c, c, c).GetAndDelete(ctx, types.NamespacedName{Namespace: driverNamespace, Name: LegacyInfraSecretName}, &corev1.Secret{},
		"the infra credentials an earlier release put into the tenant cluster")
}
