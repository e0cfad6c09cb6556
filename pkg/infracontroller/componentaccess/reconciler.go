package componentaccess

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/remote/outage"
)

// ControllerName names the controller in logs and metrics: the name it
// had before it also served the CCM, kept so that dashboards and alerts
// built on it keep working.
const ControllerName = "csi-access"

// Options configures the controller.
type Options struct {
	// ServerURL is the infra API server address written into the
	// kubeconfigs; the manager's own address when empty. Set it when pods
	// in tenant namespaces reach the infra API server by another address
	// (for example when the manager runs outside the infra cluster).
	ServerURL string
	// Profiles are the components that get infra access; CSI alone when
	// nil.
	Profiles []Profile
	// Snapshots adds SnapshotRules to the Role of the CSI profile (the
	// profile named Name); without it that Role grants no access to
	// VolumeSnapshots.
	Snapshots bool
}

// profiles returns the profiles of o, the CSI profile with SnapshotRules
// when o.Snapshots is set.
func (o Options) profiles() []Profile {
	profiles := o.Profiles
	if profiles == nil {
		profiles = []Profile{CSI()}
	}
	if !o.Snapshots {
		return profiles
	}
	out := slices.Clone(profiles)
	for i := range out {
		if out[i].Name == Name {
			out[i].Rules = slices.Concat(out[i].Rules, SnapshotRules())
		}
	}
	return out
}

// Managed selects the objects carrying our label; the manager's cache must
// select ServiceAccounts, Roles and RoleBindings with it (see
// infracontroller.CacheOptions).
func Managed() labels.Selector {
	return labels.SelectorFromSet(labels.Set{tenant.ManagedByLabel: tenant.ManagedByValue})
}

// Reconciler keeps the access objects of every profile in one tenant
// namespace per request.
type Reconciler struct {
	// Reader reads Namespaces, ServiceAccounts, Roles and RoleBindings;
	// the manager's cache.
	Reader ctrlruntimeclient.Reader
	// Writer writes the objects.
	Writer ctrlruntimeclient.Writer
	// APIReader reads, uncached, an object in the way of a Create, to
	// tell ours (a cache behind our own write) from a foreign one.
	APIReader ctrlruntimeclient.Reader
	// Tenants recognises tenant namespaces.
	Tenants tenant.Matcher
	// Options configures the controller.
	Options Options

	// secrets caches only our Secrets (the manager's cache holds only the
	// tenant kubeconfig Secrets).
	// Recorder records a Warning event on an object in the way of ours;
	// SetupWithManager sets the manager's when nil.
	Recorder events.EventRecorder

	secrets cache.Cache
	server  string
	ca      []byte
}

// SetupWithManager registers the controller and a cache of our Secrets.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := r.Tenants.Validate(); err != nil {
		return err
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(ControllerName)
	}
	cfg := mgr.GetConfig()
	r.server, r.ca = cfg.Host, cfg.CAData
	if r.Options.ServerURL != "" {
		r.server = r.Options.ServerURL
	}
	secrets, err := cache.New(cfg, cache.Options{
		NewInformer:          outage.NewInformer,
		Scheme:               mgr.GetScheme(),
		Mapper:               mgr.GetRESTMapper(),
		DefaultLabelSelector: Managed(),
	})
	if err != nil {
		return fmt.Errorf("failed to create the Secret cache of %s: %w", ControllerName, err)
	}
	if err := mgr.Add(secrets); err != nil {
		return fmt.Errorf("failed to add the Secret cache of %s: %w", ControllerName, err)
	}
	r.secrets = secrets
	own := r.Tenants.EnqueueOwnNamespace()
	err = r.Tenants.NamespaceController(mgr, ControllerName, 0).
		Watches(&corev1.ServiceAccount{}, own).
		Watches(&rbacv1.Role{}, own).
		Watches(&rbacv1.RoleBinding{}, own).
		WatchesRawSource(source.Kind(secrets, &corev1.Secret{}, tenant.EnqueueOwnNamespaceOf[*corev1.Secret](r.Tenants))).
		Complete(r)
	if err != nil {
		return fmt.Errorf("failed to set up the %s controller: %w", ControllerName, err)
	}
	return nil
}

// Reconcile brings the access objects of one tenant namespace up to date.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	namespace, live, err := r.Tenants.Live(ctx, r.Reader, req)
	if err != nil || !live {
		return reconcile.Result{}, err
	}
	var errs []error
	for _, p := range r.Options.profiles() {
		errs = append(errs, r.ensureProfile(ctx, p, namespace))
	}
	return reconcile.Result{}, errors.Join(errs...)
}

// ensureProfile keeps the access objects of one profile in namespace.
func (r *Reconciler) ensureProfile(ctx context.Context, p Profile, namespace string) error {
	errs := []error{
		r.ensure(ctx, r.Reader, serviceAccount(p, namespace)),
		r.ensure(ctx, r.Reader, role(p, namespace)),
		r.ensure(ctx, r.Reader, roleBinding(p, namespace)),
		r.ensure(ctx, r.secrets, tokenSecret(p, namespace)),
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return r.ensureKubeconfig(ctx, p, namespace)
}

// ensureKubeconfig writes a profile's kubeconfig once the token controller
// has filled the token Secret; its update requeues us.
func (r *Reconciler) ensureKubeconfig(ctx context.Context, p Profile, namespace string) error {
	var token corev1.Secret
	if err := r.secrets.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: p.TokenSecretName}, &token); err != nil {
		return ctrlruntimeclient.IgnoreNotFound(err)
	}
	if len(token.Data[corev1.ServiceAccountTokenKey]) == 0 {
		log.FromContext(ctx).V(1).Info("waiting for the token controller to fill the token Secret", "secret", p.TokenSecretName)
		return nil
	}
	ca := r.ca
	if len(token.Data[corev1.ServiceAccountRootCAKey]) > 0 {
		ca = token.Data[corev1.ServiceAccountRootCAKey]
	}
	data, err := kubeconfig(p, r.server, ca, token.Data[corev1.ServiceAccountTokenKey], namespace)
	if err != nil {
		return fmt.Errorf("failed to render the %s kubeconfig of %s: %w", p.Name, namespace, err)
	}
	return r.ensure(ctx, r.secrets, kubeconfigSecret(p, namespace, data))
}
