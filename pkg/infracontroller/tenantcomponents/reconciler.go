package tenantcomponents

import (
	"context"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/componentaccess"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/csinodeplugin"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/storageclass"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/remote/outage"
)

// Options configures the controller.
type Options struct {
	// SecretName is the name of the tenant kubeconfig Secret in each
	// tenant namespace.
	SecretName string
	// SecretKey is the key of the kubeconfig in that Secret.
	SecretKey string
	// Params are the component's own template parameters: images (empty
	// ones keep the defaults of package addons) and settings. The fields
	// the controller sets per tenant namespace are overwritten.
	Params addons.Params
}

// Selector selects the Deployments of every component.
func Selector() labels.Selector {
	ours, _ := labels.NewRequirement(tenant.ManagedByLabel, selection.Equals, []string{tenant.ManagedByValue})
	names, _ := labels.NewRequirement(addons.ControllerPodLabel, selection.In, Deployments())
	return labels.NewSelector().Add(*ours, *names)
}

// CacheByObject returns what the manager's cache must select for this
// controller: only the Deployments of our components.
func CacheByObject() map[ctrlruntimeclient.Object]cache.ByObject {
	return map[ctrlruntimeclient.Object]cache.ByObject{&appsv1.Deployment{}: {Label: Selector()}}
}

// Reconciler keeps the objects of one component in one tenant namespace
// per request.
type Reconciler struct {
	// Reader reads Namespaces, the tenant kubeconfig Secrets and our
	// Deployments; the manager's cache set up with CacheByObject.
	Reader ctrlruntimeclient.Reader
	// Writer applies and deletes the objects.
	Writer ctrlruntimeclient.Client
	// APIReader reads, uncached, an object in the way of a Create, to
	// tell ours (a cache behind our own write) from a foreign one.
	APIReader ctrlruntimeclient.Reader
	// Component is the workload to run.
	Component Component
	// Tenants recognises tenant namespaces.
	Tenants tenant.Matcher
	// Options configures the controller.
	Options Options

	// access caches only the component's infra kubeconfig Secrets and
	// its ConfigMap (the manager's cache holds only the tenant kubeconfig
	// Secrets and may hold no ConfigMap of ours).
	// Recorder records a Warning event on an object in the way of ours;
	// SetupWithManager sets the manager's when nil.
	Recorder events.EventRecorder

	access cache.Cache
}

// SetupWithManager registers the controller and a cache of the
// component's infra kubeconfig Secrets of package componentaccess and of its
// ConfigMap.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := r.Tenants.Validate(); err != nil {
		return err
	}
	comp := r.Component
	if comp.ControllerName == "" || comp.Addon == "" || comp.Deployment == "" || comp.Access.KubeconfigSecretName == "" {
		return errors.New("the Deployment controller needs a complete component")
	}
	if r.Options.SecretName == "" || r.Options.SecretKey == "" {
		return fmt.Errorf("the %s controller needs the tenant kubeconfig Secret's name and key", comp.ControllerName)
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(comp.ControllerName)
	}
	byObject := map[ctrlruntimeclient.Object]cache.ByObject{&corev1.Secret{}: {
		Label: componentaccess.Managed(),
		Field: fields.OneTermEqualSelector("metadata.name", comp.Access.KubeconfigSecretName),
	}}
	if comp.ConfigMap != "" {
		byObject[&corev1.ConfigMap{}] = cache.ByObject{
			Label: componentaccess.Managed(),
			Field: fields.OneTermEqualSelector("metadata.name", comp.ConfigMap),
		}
	}
	access, err := cache.New(mgr.GetConfig(), cache.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), ByObject: byObject, NewInformer: outage.NewInformer})
	if err != nil {
		return fmt.Errorf("failed to create the Secret cache of %s: %w", comp.ControllerName, err)
	}
	if err := mgr.Add(access); err != nil {
		return fmt.Errorf("failed to add the Secret cache of %s: %w", comp.ControllerName, err)
	}
	r.access = access
	own := r.Tenants.EnqueueOwnNamespace()
	secretName := r.Options.SecretName
	b := r.Tenants.NamespaceController(mgr, comp.ControllerName, 4).
		Watches(&corev1.Secret{}, own, builder.WithPredicates(named(secretName))).
		Watches(&appsv1.Deployment{}, own, builder.WithPredicates(named(comp.Deployment), predicate.Or[ctrlruntimeclient.Object](
			predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		WatchesRawSource(source.Kind(access, &corev1.Secret{}, tenant.EnqueueOwnNamespaceOf[*corev1.Secret](r.Tenants)))
	if comp.ConfigMap != "" {
		b = b.WatchesRawSource(source.Kind(access, &corev1.ConfigMap{}, tenant.EnqueueOwnNamespaceOf[*corev1.ConfigMap](r.Tenants)))
	}
	if r.mapsSnapshots() {
		b = b.Watches(&storagev1.StorageClass{}, r.Tenants.EnqueueAll(r.Reader))
	}
	err = b.Complete(r)
	if err != nil {
		return fmt.Errorf("failed to set up the %s controller: %w", comp.ControllerName, err)
	}
	return nil
}

// cached reads the component's objects where the controller caches them:
// the Deployment in the manager's cache, the ConfigMap in the access cache.
type cached struct {
	deployments, configMaps ctrlruntimeclient.Reader
}

// Get implements the part of ctrlruntimeclient.Reader that
// csinodeplugin.Apply uses.
func (c cached) Get(ctx context.Context, key ctrlruntimeclient.ObjectKey, obj ctrlruntimeclient.Object, opts ...ctrlruntimeclient.GetOption) error {
	if _, ok := obj.(*corev1.ConfigMap); ok {
		return c.configMaps.Get(ctx, key, obj, opts...)
	}
	return c.deployments.Get(ctx, key, obj, opts...)
}

// List implements ctrlruntimeclient.Reader; Apply never lists.
func (c cached) List(ctx context.Context, list ctrlruntimeclient.ObjectList, opts ...ctrlruntimeclient.ListOption) error {
	return c.deployments.List(ctx, list, opts...)
}

// named passes events of objects called name only.
func named(name string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(obj ctrlruntimeclient.Object) bool { return obj.GetName() == name })
}

// Reconcile brings the component of one tenant namespace up to date:
// applied when both kubeconfig Secrets exist, deleted when the tenant
// kubeconfig Secret is gone.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	namespace, live, err := r.Tenants.Live(ctx, r.Reader, req)
	if err != nil || !live {
		// A namespace being deleted takes the Deployment with it.
		return reconcile.Result{}, err
	}
	tenantKubeconfig, err := tenant.SecretData(ctx, r.Reader, namespace, r.Options.SecretName, r.Options.SecretKey)
	if err != nil {
		return reconcile.Result{}, err
	}
	if tenantKubeconfig == nil {
		return reconcile.Result{}, r.remove(ctx, namespace)
	}
	secret := r.Component.Access.KubeconfigSecretName
	infraKubeconfig, err := tenant.SecretData(ctx, r.access, namespace, secret, componentaccess.KubeconfigKey)
	if err != nil {
		return reconcile.Result{}, err
	}
	if infraKubeconfig == nil {
		// The Secret's creation is an event of the access cache.
		log.FromContext(ctx).V(1).Info("no infra kubeconfig yet", "secret", secret)
		return reconcile.Result{}, nil
	}
	p := r.params(namespace, tenantKubeconfig, infraKubeconfig)
	if r.mapsSnapshots() {
		if p.StorageClassEnforcement, err = r.storageClassEnforcement(ctx); err != nil {
			return reconcile.Result{}, err
		}
	}
	target := tenant.Target(cached{deployments: r.Reader, configMaps: r.access}, r.APIReader, r.Writer)
	target.InTheWay = tenant.WarnInTheWay(r.Recorder, "ApplyComponent")
	if err := csinodeplugin.Apply(ctx, target, r.Component.Addon, p); err != nil {
		return reconcile.Result{}, fmt.Errorf("failed to apply %s to %s: %w", r.Component.Addon, namespace, err)
	}
	return reconcile.Result{}, nil
}

// mapsSnapshots reports whether the component's driver gets the snapshot
// class mapping of the infra StorageClasses.
func (r *Reconciler) mapsSnapshots() bool {
	return r.Component.SnapshotMapping && r.Options.Params.Snapshots
}

// storageClassEnforcement returns the driver's storage-class enforcement
// for the infra StorageClasses.
func (r *Reconciler) storageClassEnforcement(ctx context.Context) (string, error) {
	var infra storagev1.StorageClassList
	if err := r.Reader.List(ctx, &infra); err != nil {
		return "", fmt.Errorf("failed to list infra storage classes: %w", err)
	}
	return storageclass.StorageClassEnforcement(infra.Items)
}

// params returns the template parameters of the component in namespace:
// its own (Options.Params) with the per-namespace fields set.
func (r *Reconciler) params(namespace string, tenantKubeconfig, infraKubeconfig []byte) addons.Params {
	p := r.Options.Params
	p.ClusterID = strings.TrimPrefix(namespace, r.Tenants.Prefix)
	p.InfraNamespace = namespace
	p.InfraKubeconfigSecret = r.Component.Access.KubeconfigSecretName
	p.InfraKubeconfigKey = componentaccess.KubeconfigKey
	p.TenantKubeconfigSecret = r.Options.SecretName
	p.TenantKubeconfigKey = r.Options.SecretKey
	parts := [][]byte{tenantKubeconfig, infraKubeconfig}
	if r.Component.StartupConfig != nil {
		parts = append(parts, []byte(r.Component.StartupConfig(p)))
	}
	p.ConfigHash = configHash(parts...)
	return p
}
