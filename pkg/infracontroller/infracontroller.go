package infracontroller

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/fields"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/csiaccess"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/flavors"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/storageclass"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// Options configures the infra-controller.
type Options struct {
	// NamespacePrefix is the name prefix of tenant namespaces;
	// tenant.DefaultPrefix when empty.
	NamespacePrefix string
	// Flavors configures preset, instancetype and preference sync.
	Flavors flavors.Options
	// StorageClasses configures storage-class initialization.
	StorageClasses storageclass.Options
	// DisableStorageClasses turns storage-class initialization off.
	DisableStorageClasses bool
	// CSIAccess configures the CSI driver's infra access objects.
	CSIAccess csiaccess.Options
	// DisableCSIAccess turns the CSI driver's infra access objects off.
	DisableCSIAccess bool
}

// DefaultOptions returns the options of a plain Kubermatic layout with
// every feature switched on.
func DefaultOptions() Options {
	return Options{
		NamespacePrefix: tenant.DefaultPrefix,
		Flavors: flavors.Options{
			SourceNamespace: flavors.DefaultSourceNamespace,
			Presets:         true,
			Instancetypes:   true,
			Preferences:     true,
		},
	}
}

func (o Options) tenants() tenant.Matcher {
	if o.NamespacePrefix == "" {
		return tenant.Matcher{Prefix: tenant.DefaultPrefix}
	}
	return tenant.Matcher{Prefix: o.NamespacePrefix}
}

// CacheOptions returns the cache options the manager must be built with:
// the cache holds only the tenant kubeconfig Secrets, not every Secret of
// the infra cluster, and only our ServiceAccounts, Roles and RoleBindings.
func CacheOptions(o Options) cache.Options {
	ours := cache.ByObject{Label: csiaccess.Managed()}
	return cache.Options{ByObject: map[ctrlruntimeclient.Object]cache.ByObject{
		&corev1.Secret{}:         {Field: fields.OneTermEqualSelector("metadata.name", o.StorageClasses.SecretNameOrDefault())},
		&corev1.ServiceAccount{}: ours,
		&rbacv1.Role{}:           ours,
		&rbacv1.RoleBinding{}:    ours,
	}}
}

// Controllers are the reconcilers Setup registered.
type Controllers struct {
	// Flavors syncs presets, instancetypes and preferences.
	Flavors *flavors.Reconciler
	// StorageClasses initializes tenant storage classes; nil when
	// disabled.
	StorageClasses *storageclass.Reconciler
	// CSIAccess keeps the CSI driver's infra access objects; nil when
	// disabled.
	CSIAccess *csiaccess.Reconciler
}

// Setup registers the controllers with mgr. All reads go through the
// manager's cache and all writes through its client.
func Setup(mgr ctrl.Manager, o Options) (*Controllers, error) {
	tenants := o.tenants()
	if err := tenants.Validate(); err != nil {
		return nil, err
	}
	c := &Controllers{Flavors: &flavors.Reconciler{
		Reader:  mgr.GetCache(),
		Writer:  mgr.GetClient(),
		Tenants: tenants,
		Options: o.Flavors,
	}}
	if err := c.Flavors.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	if !o.DisableStorageClasses {
		c.StorageClasses = &storageclass.Reconciler{Reader: mgr.GetCache(), Tenants: tenants, Options: o.StorageClasses}
		if err := c.StorageClasses.SetupWithManager(mgr); err != nil {
			return nil, err
		}
	}
	if !o.DisableCSIAccess {
		c.CSIAccess = &csiaccess.Reconciler{Reader: mgr.GetCache(), Writer: mgr.GetClient(), Tenants: tenants, Options: o.CSIAccess}
		if err := c.CSIAccess.SetupWithManager(mgr); err != nil {
			return nil, err
		}
	}
	return c, nil
}
