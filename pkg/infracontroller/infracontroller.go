package infracontroller

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/fields"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	addonsctrl "github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/csiaccess"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/csicontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/flavors"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/imagecache"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/netpol"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/networks"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/storageclass"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantcluster"
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
	// EnableImageCache turns the image cache on: named images imported
	// per tenant namespace and unused cache DataVolumes removed. It needs
	// CDI's DataVolume CRD.
	EnableImageCache bool
	// ImageCache configures the image cache.
	ImageCache imagecache.Options
	// EnableNetworks turns tenant networks on: the CNI configurations of
	// ConfigMap tenant-networks become NetworkAttachmentDefinitions. It
	// needs Multus' NetworkAttachmentDefinition CRD.
	EnableNetworks bool
	// NetworkPolicies configures the default and custom NetworkPolicies.
	NetworkPolicies netpol.Options
	// DisableNetworkPolicies turns the NetworkPolicy controller off
	// altogether: neither default nor custom policies are kept, and the
	// ones made earlier stay as they are.
	DisableNetworkPolicies bool
	// EnableTenantClusters turns the TenantCluster controller on. It needs
	// the TenantCluster CRD (charts/infra-controller/crds).
	EnableTenantClusters bool
	// TenantCleanupTimeout is how long the deletion of a TenantCluster
	// retries a tenant cluster that fails before it leaves the objects
	// there; tenantcluster.DefaultTenantCleanupTimeout when 0.
	TenantCleanupTimeout time.Duration
	// EnableAddons turns the addons controller on: the tenant-cluster side
	// of the KubeVirt CSI driver (addons/kubevirt-csi, the node plugin) is
	// applied to every tenant cluster with a kubeconfig Secret.
	EnableAddons bool
	// Addons configures the addons controller; its Secret name and key
	// default to the storage-class controller's.
	Addons addonsctrl.Options
	// EnableCSIController turns the CSI controller controller on: the
	// controller side of the KubeVirt CSI driver
	// (addons/kubevirt-csi-controller) runs in every tenant namespace with
	// a tenant kubeconfig Secret. It needs the CSI access objects
	// (DisableCSIAccess false), whose kubeconfig it uses.
	EnableCSIController bool
	// CSIController configures the CSI controller controller; its Secret
	// name and key default to the storage-class controller's.
	CSIController csicontroller.Options
}

// DefaultOptions returns the options of a plain Kubermatic layout with
// every feature switched on except the image cache and tenant networks,
// which need CDI's and Multus' CRDs.
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
// the infra cluster, only our ServiceAccounts, Roles and RoleBindings, only
// the image-cache ConfigMaps, only cache DataVolumes and only our
// NetworkAttachmentDefinitions, NetworkPolicies and CSI controller
// Deployments.
func CacheOptions(o Options) cache.Options {
	ours := cache.ByObject{Label: csiaccess.Managed()}
	byObject := map[ctrlruntimeclient.Object]cache.ByObject{
		&corev1.Secret{}:         {Field: fields.OneTermEqualSelector("metadata.name", o.StorageClasses.SecretNameOrDefault())},
		&corev1.ServiceAccount{}: ours,
		&rbacv1.Role{}:           ours,
		&rbacv1.RoleBinding{}:    ours,
	}
	// Kinds of switched-off features stay out: the manager would fail to
	// start when their CRDs are not installed.
	if o.EnableImageCache {
		maps.Copy(byObject, imagecache.CacheByObject())
	}
	if o.EnableNetworks {
		maps.Copy(byObject, networks.CacheByObject())
	}
	if !o.DisableNetworkPolicies {
		maps.Copy(byObject, netpol.CacheByObject())
	}
	if o.EnableCSIController {
		maps.Copy(byObject, csicontroller.CacheByObject())
	}
	return cache.Options{ByObject: byObject}
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
	// ImageCache keeps the image cache; nil when disabled.
	ImageCache *imagecache.Reconciler
	// Networks keeps the tenant networks; nil when disabled.
	Networks *networks.Reconciler
	// NetworkPolicies keeps the NetworkPolicies; nil when disabled.
	NetworkPolicies *netpol.Reconciler
	// TenantClusters keeps the namespaces of TenantClusters; nil when
	// disabled.
	TenantClusters *tenantcluster.Reconciler
	// Addons applies the addons to tenant clusters; nil when disabled.
	Addons *addonsctrl.Reconciler
	// CSIController keeps the CSI controller Deployments; nil when
	// disabled.
	CSIController *csicontroller.Reconciler
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
	if o.EnableImageCache {
		c.ImageCache = &imagecache.Reconciler{Reader: mgr.GetCache(), Writer: mgr.GetClient(), Tenants: tenants, Options: o.ImageCache}
		if err := c.ImageCache.SetupWithManager(mgr); err != nil {
			return nil, err
		}
	}
	if err := setupNetworking(mgr, o, tenants, c); err != nil {
		return nil, err
	}
	if err := setupTenantClusters(mgr, o, tenants, c); err != nil {
		return nil, err
	}
	if err := setupAddons(mgr, o, tenants, c); err != nil {
		return nil, err
	}
	if err := setupCSIController(mgr, o, tenants, c); err != nil {
		return nil, err
	}
	return c, nil
}

// setupAddons registers the addons controller when o switches it on.
func setupAddons(mgr ctrl.Manager, o Options, tenants tenant.Matcher, c *Controllers) error {
	if !o.EnableAddons {
		return nil
	}
	ao := o.Addons
	if ao.SecretName == "" {
		ao.SecretName = o.StorageClasses.SecretNameOrDefault()
	}
	if ao.SecretKey == "" {
		ao.SecretKey = o.StorageClasses.SecretKeyOrDefault()
	}
	c.Addons = &addonsctrl.Reconciler{Reader: mgr.GetCache(), Tenants: tenants, Options: ao}
	return c.Addons.SetupWithManager(mgr)
}

// setupCSIController registers the CSI controller controller when o
// switches it on.
func setupCSIController(mgr ctrl.Manager, o Options, tenants tenant.Matcher, c *Controllers) error {
	if !o.EnableCSIController {
		return nil
	}
	if o.DisableCSIAccess {
		return errors.New("the CSI controller needs the CSI access objects: do not disable CSI access")
	}
	co := o.CSIController
	co.SecretName = cmp.Or(co.SecretName, o.StorageClasses.SecretNameOrDefault())
	co.SecretKey = cmp.Or(co.SecretKey, o.StorageClasses.SecretKeyOrDefault())
	c.CSIController = &csicontroller.Reconciler{Reader: mgr.GetCache(), Writer: mgr.GetClient(), Tenants: tenants, Options: co}
	return c.CSIController.SetupWithManager(mgr)
}

// setupTenantClusters registers the TenantCluster controller when o
// switches it on, adding the TenantCluster types to the manager's scheme.
func setupTenantClusters(mgr ctrl.Manager, o Options, tenants tenant.Matcher, c *Controllers) error {
	if !o.EnableTenantClusters {
		return nil
	}
	if err := infrav1alpha1.AddToScheme(mgr.GetScheme()); err != nil {
		return fmt.Errorf("failed to add the TenantCluster types to the scheme: %w", err)
	}
	mapper, err := tenantcluster.Mapper([]string{addons.KubeVirtCSI})
	if err != nil {
		return err
	}
	c.TenantClusters = &tenantcluster.Reconciler{
		Client:              mgr.GetClient(),
		APIReader:           mgr.GetAPIReader(),
		Tenants:             tenants,
		KubeconfigSecret:    o.StorageClasses.SecretNameOrDefault(),
		KubeconfigSecretKey: o.StorageClasses.SecretKeyOrDefault(),
		Tenant: &tenantcluster.TenantObjects{
			Clients: &tenant.Clients{Scheme: clientgoscheme.Scheme, Wrap: o.StorageClasses.WrapConfig, Mapper: mapper},
			Tenants: tenants,
			Addons:  []string{addons.KubeVirtCSI},
		},
		TenantCleanupTimeout: o.TenantCleanupTimeout,
		ImageCacheOff:        !o.EnableImageCache,
		NetworksOff:          !o.EnableNetworks,
	}
	return c.TenantClusters.SetupWithManager(mgr)
}

// setupNetworking registers the tenant network and NetworkPolicy
// controllers that o switches on.
func setupNetworking(mgr ctrl.Manager, o Options, tenants tenant.Matcher, c *Controllers) error {
	if o.EnableNetworks {
		c.Networks = &networks.Reconciler{Reader: mgr.GetCache(), Writer: mgr.GetClient(), Tenants: tenants}
		if err := c.Networks.SetupWithManager(mgr); err != nil {
			return err
		}
	}
	if !o.DisableNetworkPolicies {
		c.NetworkPolicies = &netpol.Reconciler{Reader: mgr.GetCache(), Writer: mgr.GetClient(), Tenants: tenants, Options: o.NetworkPolicies}
		if err := c.NetworkPolicies.SetupWithManager(mgr); err != nil {
			return err
		}
	}
	return nil
}
