package csicontroller

import (
	"context"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/queue"
	addonsctrl "github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/csiaccess"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// ControllerName names the controller in logs and metrics.
const ControllerName = "csi-controller"

// Options configures the controller.
type Options struct {
	// SecretName is the name of the tenant kubeconfig Secret in each
	// tenant namespace.
	SecretName string
	// SecretKey is the key of the kubeconfig in that Secret.
	SecretKey string
	// Images overrides the images of the Deployment; empty ones keep the
	// defaults of package addons. Only the image fields are used.
	Images addons.Params
}

// Selector selects the Deployments this controller makes.
func Selector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{
		tenant.ManagedByLabel:     tenant.ManagedByValue,
		addons.ControllerPodLabel: addons.ControllerName,
	})
}

// CacheByObject returns what the manager's cache must select for this
// controller: only our CSI controller Deployments.
func CacheByObject() map[ctrlruntimeclient.Object]cache.ByObject {
	return map[ctrlruntimeclient.Object]cache.ByObject{&appsv1.Deployment{}: {Label: Selector()}}
}

// Reconciler keeps the CSI controller Deployment of one tenant namespace
// per request.
type Reconciler struct {
	// Reader reads Namespaces, the tenant kubeconfig Secrets and our
	// Deployments; the manager's cache set up with CacheByObject.
	Reader ctrlruntimeclient.Reader
	// Writer applies and deletes the Deployments.
	Writer ctrlruntimeclient.Client
	// Tenants recognises tenant namespaces.
	Tenants tenant.Matcher
	// Options configures the controller.
	Options Options

	// access caches only the CSI driver's infra kubeconfig Secrets (the
	// manager's cache holds only the tenant kubeconfig Secrets).
	access cache.Cache
}

// SetupWithManager registers the controller and a cache of the infra
// kubeconfig Secrets of package csiaccess.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := r.Tenants.Validate(); err != nil {
		return err
	}
	if r.Options.SecretName == "" || r.Options.SecretKey == "" {
		return errors.New("the CSI controller needs the tenant kubeconfig Secret's name and key")
	}
	access, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme: mgr.GetScheme(),
		Mapper: mgr.GetRESTMapper(),
		ByObject: map[ctrlruntimeclient.Object]cache.ByObject{&corev1.Secret{}: {
			Label: csiaccess.Managed(),
			Field: fields.OneTermEqualSelector("metadata.name", csiaccess.KubeconfigSecretName),
		}},
	})
	if err != nil {
		return fmt.Errorf("failed to create the Secret cache of %s: %w", ControllerName, err)
	}
	if err := mgr.Add(access); err != nil {
		return fmt.Errorf("failed to add the Secret cache of %s: %w", ControllerName, err)
	}
	r.access = access
	own := r.Tenants.EnqueueOwnNamespace()
	secretName := r.Options.SecretName
	err = ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&corev1.Namespace{}, builder.WithPredicates(r.Tenants.NamespacePredicate())).
		Watches(&corev1.Secret{}, own, builder.WithPredicates(named(secretName))).
		Watches(&appsv1.Deployment{}, own, builder.WithPredicates(named(addons.ControllerName), predicate.Or[ctrlruntimeclient.Object](
			predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		WatchesRawSource(source.Kind(access, &corev1.Secret{}, handler.TypedEnqueueRequestsFromMapFunc(
			func(_ context.Context, s *corev1.Secret) []reconcile.Request {
				if !r.Tenants.IsTenant(s.Namespace) {
					return nil
				}
				return []reconcile.Request{tenant.Request(s.Namespace)}
			}))).
		WithOptions(controller.Options{MaxConcurrentReconciles: 4, RateLimiter: queue.RateLimiter(0)}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("failed to set up the %s controller: %w", ControllerName, err)
	}
	return nil
}

// named passes events of objects called name only.
func named(name string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(obj ctrlruntimeclient.Object) bool { return obj.GetName() == name })
}

// Reconcile brings the CSI controller of one tenant namespace up to date:
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
	infraKubeconfig, err := tenant.SecretData(ctx, r.access, namespace, csiaccess.KubeconfigSecretName, csiaccess.KubeconfigKey)
	if err != nil {
		return reconcile.Result{}, err
	}
	if infraKubeconfig == nil {
		// The Secret's creation is an event of the access cache.
		log.FromContext(ctx).V(1).Info("no CSI driver infra kubeconfig yet", "secret", csiaccess.KubeconfigSecretName)
		return reconcile.Result{}, nil
	}
	p := r.params(namespace, tenantKubeconfig, infraKubeconfig)
	if err := addonsctrl.Apply(ctx, r.Writer, addons.KubeVirtCSIController, p); err != nil {
		return reconcile.Result{}, fmt.Errorf("failed to apply the CSI controller of %s: %w", namespace, err)
	}
	return reconcile.Result{}, nil
}

// params returns the template parameters of the Deployment of namespace.
func (r *Reconciler) params(namespace string, tenantKubeconfig, infraKubeconfig []byte) addons.Params {
	images := r.Options.Images
	return addons.Params{
		ClusterID:              strings.TrimPrefix(namespace, r.Tenants.Prefix),
		InfraNamespace:         namespace,
		InfraKubeconfigSecret:  csiaccess.KubeconfigSecretName,
		InfraKubeconfigKey:     csiaccess.KubeconfigKey,
		TenantKubeconfigSecret: r.Options.SecretName,
		TenantKubeconfigKey:    r.Options.SecretKey,
		ConfigHash:             configHash(tenantKubeconfig, infraKubeconfig),
		DriverImage:            images.DriverImage,
		LivenessProbeImage:     images.LivenessProbeImage,
		ProvisionerImage:       images.ProvisionerImage,
		AttacherImage:          images.AttacherImage,
		ResizerImage:           images.ResizerImage,
	}
}
