package netpol

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "network-policies"

// ReasonInvalidConfig is the reason of the Warning event on a ConfigMap
// ConfigMapName with entries that were refused and not applied: the one a
// TenantCluster's ConfigReady gives for refused entries of its spec.
const ReasonInvalidConfig = infrav1alpha1.ReasonInvalidConfig

// CacheByObject returns what the manager's cache must select for this
// controller: only our NetworkPolicies.
func CacheByObject() map[ctrlruntimeclient.Object]cache.ByObject {
	return map[ctrlruntimeclient.Object]cache.ByObject{
		&networkingv1.NetworkPolicy{}: {Label: labels.SelectorFromSet(labels.Set{tenant.ManagedByLabel: tenant.ManagedByValue})},
	}
}

// Reconciler keeps the NetworkPolicies of one tenant namespace per
// request.
type Reconciler struct {
	// Reader reads Namespaces and NetworkPolicies; the manager's cache set
	// up with CacheByObject.
	Reader ctrlruntimeclient.Reader
	// Writer writes NetworkPolicies.
	Writer ctrlruntimeclient.Writer
	// APIReader reads, uncached, an object in the way of a Create, to
	// tell ours (a cache behind our own write) from a foreign one.
	APIReader ctrlruntimeclient.Reader
	// Tenants recognises tenant namespaces.
	Tenants tenant.Matcher
	// Options configures the policies.
	Options Options
	// Recorder records a Warning event on a ConfigMap with refused
	// entries; SetupWithManager sets the manager's when nil.
	Recorder events.EventRecorder

	configMaps cache.Cache
}

// SetupWithManager registers the controller and a cache of the
// ConfigMaps named ConfigMapName.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := r.Tenants.Validate(); err != nil {
		return err
	}
	if err := r.Options.Validate(); err != nil {
		return err
	}
	if ns := r.Options.ClusterPoliciesNamespace; ns != "" && r.Tenants.IsTenant(ns) {
		return fmt.Errorf("the namespace of the cluster-wide policies, %s, must not be a tenant namespace", ns)
	}
	configMaps, err := tenant.ConfigMapCache(mgr, ConfigMapName)
	if err != nil {
		return err
	}
	r.configMaps = configMaps
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(ControllerName)
	}
	err = r.Tenants.NamespaceController(mgr, ControllerName, 0).
		Watches(&networkingv1.NetworkPolicy{}, r.Tenants.EnqueueOwnNamespace()).
		WatchesRawSource(r.Tenants.ConfigMapSource(configMaps)).
		WatchesRawSource(source.Kind(configMaps, &corev1.ConfigMap{}, r.clusterPoliciesHandler())).
		Complete(r)
	if err != nil {
		return fmt.Errorf("failed to set up the %s controller: %w", ControllerName, err)
	}
	return nil
}

// namespaceOptions returns the options for one tenant namespace: the
// controller's, with the default policies off when its TenantCluster
// switches them off (recorded on the namespace).
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
	o.DisableDefaults = o.DisableDefaults || infrav1alpha1.Off(cluster.DefaultNetworkPolicies)
	return o, nil
}

// Reconcile brings the policies of one tenant namespace up to date: the
// defaults, then the custom ones (a custom policy named like a default one
// replaces it); our policies no longer wanted are deleted. Custom entries
// the API server would refuse are never written: when everything else
// succeeded, a terminal error naming them is returned (a retry cannot fix
// them; a change of the ConfigMap triggers the next reconcile), else it is
// returned with the other errors.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	namespace, live, err := r.Tenants.Live(ctx, r.Reader, req)
	if err != nil || !live {
		return reconcile.Result{}, err
	}
	custom, invalid, err := r.custom(ctx, namespace)
	if err != nil {
		return reconcile.Result{}, err
	}
	o, err := r.namespaceOptions(ctx, namespace)
	if err != nil {
		return reconcile.Result{}, err
	}
	wanted := map[string]networkingv1.NetworkPolicy{}
	for _, p := range append(o.Defaults(namespace), custom...) {
		wanted[p.Name] = p
	}
	var list networkingv1.NetworkPolicyList
	if err := r.Reader.List(ctx, &list, ctrlruntimeclient.InNamespace(namespace)); err != nil {
		return reconcile.Result{}, fmt.Errorf("failed to list the NetworkPolicies of %s: %w", namespace, err)
	}
	ours := map[string]*networkingv1.NetworkPolicy{}
	for i := range list.Items {
		if tenant.IsManaged(&list.Items[i]) {
			ours[list.Items[i].Name] = &list.Items[i]
		}
	}
	var errs []error
	for name, want := range wanted {
		errs = append(errs, r.ensure(ctx, &want, ours[name]))
		delete(ours, name)
	}
	for _, stale := range ours {
		errs = append(errs, tenant.Target(r.Reader, r.APIReader, r.Writer).Delete(ctx, stale, "a NetworkPolicy no longer wanted"))
	}
	if err := errors.Join(errs...); err != nil {
		return reconcile.Result{}, errors.Join(err, invalid)
	}
	if invalid != nil {
		return reconcile.Result{}, reconcile.TerminalError(invalid)
	}
	return reconcile.Result{}, nil
}

// clusterPoliciesHandler maps a change of the cluster-wide ConfigMap to
// every tenant namespace, read from the cache.
func (r *Reconciler) clusterPoliciesHandler() handler.TypedEventHandler[*corev1.ConfigMap, reconcile.Request] {
	return handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, cm *corev1.ConfigMap) []reconcile.Request {
		if !r.isClusterPolicies(cm) {
			return nil
		}
		return r.Tenants.AllRequests(ctx, r.Reader)
	})
}

// isClusterPolicies reports whether cm is the cluster-wide ConfigMap.
func (r *Reconciler) isClusterPolicies(cm *corev1.ConfigMap) bool {
	ns := r.Options.ClusterPoliciesNamespace
	return ns != "" && cm.Namespace == ns && cm.Name == ConfigMapName
}

// custom returns the valid custom policies of the namespace: the
// cluster-wide ones, replaced by the namespace's own of the same name.
// Invalid entries are skipped: invalid names them, and each ConfigMap
// holding some gets a Warning event.
func (r *Reconciler) custom(ctx context.Context, namespace string) (out []networkingv1.NetworkPolicy, invalid, err error) {
	byName := map[string]networkingv1.NetworkPolicy{}
	var refused []error
	for _, source := range []string{r.Options.ClusterPoliciesNamespace, namespace} {
		if source == "" {
			continue
		}
		cm, err := tenant.ReadConfigMap(ctx, r.configMaps, source, ConfigMapName)
		if err != nil {
			return nil, nil, err
		}
		if cm == nil {
			continue
		}
		policies, err := ParseCustom(cm)
		if err != nil {
			refused = append(refused, err)
			r.warn(cm, err)
		}
		for _, p := range policies {
			p.Namespace = namespace
			byName[p.Name] = p
		}
	}
	out = make([]networkingv1.NetworkPolicy, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[name])
	}
	return out, errors.Join(refused...), nil
}

// warn records a Warning event on cm naming its refused entries; Reconcile
// returns them, so they are logged too.
func (r *Reconciler) warn(cm *corev1.ConfigMap, refused error) {
	tenant.WarnRefused(r.Recorder, cm, "ApplyNetworkPolicies", refused)
}

// ensure writes want with package apply; have is our policy of its name
// from the cache, nil when there is none. The cache sees only ours, so a
// foreign policy of the same name makes the Create fail with AlreadyExists,
// and it is left alone.
func (r *Reconciler) ensure(ctx context.Context, want, have *networkingv1.NetworkPolicy) error {
	_, err := tenant.Target(r.Reader, r.APIReader, r.Writer).Known(ctx, have, want)
	return err
}
