package infracontroller

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/componentaccess"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/csinodeplugin"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/flavors"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/imagecache"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/netpol"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/networks"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/networks/vlan"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/storageclass"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantcluster"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantcomponents"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantconn"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/remote/outage"
)

// Options configures the infra-controller. Every top-level switch is an
// Enable* field, so the zero Options switches every feature off;
// DefaultOptions switches on the ones the binary runs by default.
type Options struct {
	// NamespacePrefix is the name prefix of tenant namespaces;
	// tenant.DefaultPrefix when empty.
	NamespacePrefix string
	// Flavors configures preset, instancetype and preference sync.
	Flavors flavors.Options
	// StorageClasses configures storage-class initialization.
	StorageClasses storageclass.Options
	// TenantKubeconfig names the Secret in each tenant namespace that
	// holds the tenant cluster's kubeconfig, for every controller that
	// reaches tenant clusters; tenant's defaults for what is empty.
	TenantKubeconfig tenantconn.KubeconfigSecret
	// EnableStorageClasses turns storage-class initialization on.
	EnableStorageClasses bool
	// ComponentAccess configures the infra access objects; its Profiles are
	// set from EnableCSIAccess and EnableCCM.
	ComponentAccess componentaccess.Options
	// EnableCSIAccess turns the CSI driver's infra access objects (the
	// CSI profile) on.
	EnableCSIAccess bool
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
	// VLANs gives every TenantCluster a VLAN id of a range and a
	// NetworkAttachmentDefinition on it; off while VLANs.Template is
	// empty. It needs the TenantCluster controller and Multus'
	// NetworkAttachmentDefinition CRD.
	VLANs vlan.Options
	// NetworkPolicies configures the default and custom NetworkPolicies.
	NetworkPolicies netpol.Options
	// EnableNetworkPolicies turns the NetworkPolicy controller on; while
	// it is off neither default nor custom policies are kept, and the
	// ones made earlier stay as they are.
	EnableNetworkPolicies bool
	// EnableTenantClusters turns the TenantCluster controller on. It needs
	// the TenantCluster CRD (charts/infra-controller/crds).
	EnableTenantClusters bool
	// WrapTenantConfig, when set, adjusts the REST config of every
	// connection to a tenant cluster, e.g. to wrap its transport.
	WrapTenantConfig func(*rest.Config)
	// TenantCleanupTimeout is how long the deletion of a TenantCluster
	// retries a tenant cluster that fails before it leaves the objects
	// there; tenantcluster.DefaultTenantCleanupTimeout when 0.
	TenantCleanupTimeout time.Duration
	// EnableCSINodePlugin turns the CSI node plugin controller on: the
	// tenant-cluster side of the KubeVirt CSI driver (addons/kubevirt-csi,
	// the node plugin) is applied to every tenant cluster with a
	// kubeconfig Secret.
	EnableCSINodePlugin bool
	// CSINodePlugin configures the CSI node plugin controller; its Secret
	// name and key default to the storage-class controller's.
	CSINodePlugin csinodeplugin.Options
	// EnableCSIController turns the CSI controller controller on: the
	// controller side of the KubeVirt CSI driver
	// (addons/kubevirt-csi-controller) runs in every tenant namespace with
	// a tenant kubeconfig Secret. It needs the CSI access objects
	// (EnableCSIAccess), whose kubeconfig it uses.
	EnableCSIController bool
	// CSIController configures the CSI controller controller; its Secret
	// name and key default to the storage-class controller's.
	CSIController tenantcomponents.Options
	// EnableCCM turns the KubeVirt cloud controller manager on: the CCM
	// profile of the access objects (a ServiceAccount, Role, token and
	// kubeconfig per tenant namespace, and one ClusterRole and
	// ClusterRoleBinding letting them read infra Nodes) and
	// addons/kubevirt-ccm in every tenant namespace with a tenant
	// kubeconfig Secret. It works whether or not CSI access is enabled.
	EnableCCM bool
	// CCM configures the cloud controller manager: Params carries its
	// image and settings (CCMImage, CCMLoadBalancer, CCMZoneAndRegion,
	// CCMFeatureGates); the Secret name and key default to the
	// storage-class controller's.
	CCM tenantcomponents.Options
}

// DefaultOptions returns the options of a plain Kubermatic layout: flavors,
// tenant storage classes, CSI access and NetworkPolicies switched on, the
// features that need nothing but KubeVirt's CRDs. The other switches stay
// off for the caller to choose: the binary's flags switch the CSI node
// plugin, the CSI controller, TenantClusters and the image cache on too.
func DefaultOptions() Options {
	return Options{
		NamespacePrefix:       tenant.DefaultPrefix,
		EnableStorageClasses:  true,
		EnableCSIAccess:       true,
		EnableNetworkPolicies: true,
		Flavors: flavors.Options{
			SourceNamespace: flavors.DefaultSourceNamespace,
			Presets:         true,
			Instancetypes:   true,
			Preferences:     true,
		},
		CCM:   tenantcomponents.Options{Params: addons.Params{CCMLoadBalancer: true, CCMZoneAndRegion: true}},
		VLANs: vlan.Options{NetworkName: vlan.DefaultNetworkName, Workers: vlan.DefaultWorkers},
	}
}

// accessProfiles returns the access profiles o switches on.
func (o Options) accessProfiles() []componentaccess.Profile {
	var profiles []componentaccess.Profile
	if o.EnableCSIAccess {
		profiles = append(profiles, componentaccess.CSI())
	}
	if o.EnableCCM {
		profiles = append(profiles, componentaccess.CCM())
	}
	return profiles
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
// NetworkAttachmentDefinitions, NetworkPolicies, ClusterRoles,
// ClusterRoleBindings and CSI controller and CCM Deployments.
func CacheOptions(o Options) cache.Options {
	ours := cache.ByObject{Label: componentaccess.Managed()}
	byObject := map[ctrlruntimeclient.Object]cache.ByObject{
		&corev1.Secret{}:             {Field: fields.OneTermEqualSelector("metadata.name", o.TenantKubeconfig.OrDefault().Name)},
		&corev1.ServiceAccount{}:     ours,
		&rbacv1.Role{}:               ours,
		&rbacv1.RoleBinding{}:        ours,
		&rbacv1.ClusterRole{}:        ours,
		&rbacv1.ClusterRoleBinding{}: ours,
	}
	// Kinds of switched-off features stay out: the manager would fail to
	// start when their CRDs are not installed.
	if o.EnableImageCache {
		maps.Copy(byObject, imagecache.CacheByObject())
	}
	if o.EnableNetworks || o.VLANs.Enabled() {
		maps.Copy(byObject, networks.CacheByObject())
	}
	if o.VLANs.Enabled() {
		maps.Copy(byObject, vlan.CacheByObject(o.VLANs))
	}
	if o.EnableNetworkPolicies {
		maps.Copy(byObject, netpol.CacheByObject())
	}
	if o.EnableCSIController || o.EnableCCM {
		maps.Copy(byObject, tenantcomponents.CacheByObject())
	}
	return cache.Options{ByObject: byObject, NewInformer: outage.NewInformer}
}

// Controllers are the reconcilers Setup registered.
type Controllers struct {
	// Flavors syncs presets, instancetypes and preferences.
	Flavors *flavors.Reconciler
	// StorageClasses initializes tenant storage classes; nil when
	// disabled.
	StorageClasses *storageclass.Reconciler
	// ComponentAccess keeps the infra access objects of the CSI driver and the
	// CCM; nil when both are disabled.
	ComponentAccess *componentaccess.Reconciler
	// ClusterAccess keeps the cluster-wide access objects (the CCM's
	// ClusterRole and ClusterRoleBinding); nil when no enabled profile
	// has any.
	ClusterAccess *componentaccess.ClusterReconciler
	// ImageCache keeps the image cache; nil when disabled.
	ImageCache *imagecache.Reconciler
	// Networks keeps the tenant networks; nil when disabled.
	Networks *networks.Reconciler
	// VLANs keeps the VLAN of every TenantCluster; nil when disabled.
	VLANs *vlan.Reconciler
	// NetworkPolicies keeps the NetworkPolicies; nil when disabled.
	NetworkPolicies *netpol.Reconciler
	// TenantClusters keeps the namespaces of TenantClusters; nil when
	// disabled.
	TenantClusters *tenantcluster.Reconciler
	// CSINodePlugin applies the CSI node plugin to tenant clusters; nil
	// when disabled.
	CSINodePlugin *csinodeplugin.Reconciler
	// CSIController keeps the CSI controller Deployments; nil when
	// disabled.
	CSIController *tenantcomponents.Reconciler
	// CCM keeps the cloud controller manager Deployments; nil when
	// disabled.
	CCM *tenantcomponents.Reconciler
}

// Setup registers the controllers with mgr. All reads go through the
// manager's cache and all writes through its client.
func Setup(mgr ctrl.Manager, o Options) (*Controllers, error) {
	tenants := o.tenants()
	if err := tenants.Validate(); err != nil {
		return nil, err
	}
	c := &Controllers{Flavors: &flavors.Reconciler{
		Reader:    mgr.GetCache(),
		Writer:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Tenants:   tenants,
		Options:   o.Flavors,
	}}
	if err := c.Flavors.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	access, err := tenantAccess(mgr, o)
	if err != nil {
		return nil, err
	}
	if o.EnableStorageClasses {
		c.StorageClasses = &storageclass.Reconciler{Reader: mgr.GetCache(), Tenants: tenants, Options: o.StorageClasses, Access: access,
			Events: &tenantcluster.OwnerEvents{Reader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder(storageclass.ControllerName)}}
		if err := c.StorageClasses.SetupWithManager(mgr); err != nil {
			return nil, err
		}
	}
	if err := setupAccess(mgr, o, tenants, c); err != nil {
		return nil, err
	}
	if o.EnableImageCache {
		c.ImageCache = &imagecache.Reconciler{Reader: mgr.GetCache(), APIReader: mgr.GetAPIReader(), Writer: mgr.GetClient(), Tenants: tenants, Options: o.ImageCache}
		if err := c.ImageCache.SetupWithManager(mgr); err != nil {
			return nil, err
		}
	}
	if err := setupNetworking(mgr, o, tenants, c); err != nil {
		return nil, err
	}
	if err := setupTenantClusters(mgr, o, tenants, access, c); err != nil {
		return nil, err
	}
	if err := setupVLANs(mgr, o, tenants, c); err != nil {
		return nil, err
	}
	if err := setupCSINodePlugin(mgr, o, tenants, access, c); err != nil {
		return nil, err
	}
	if err := setupDeployments(mgr, o, tenants, c); err != nil {
		return nil, err
	}
	return c, nil
}

// setupAccess registers the access controllers for the profiles o
// switches on.
func setupAccess(mgr ctrl.Manager, o Options, tenants tenant.Matcher, c *Controllers) error {
	profiles := o.accessProfiles()
	if len(profiles) == 0 {
		return nil
	}
	ao := o.ComponentAccess
	ao.Profiles = profiles
	c.ComponentAccess = &componentaccess.Reconciler{Reader: mgr.GetCache(), APIReader: mgr.GetAPIReader(), Writer: mgr.GetClient(), Tenants: tenants, Options: ao}
	if err := c.ComponentAccess.SetupWithManager(mgr); err != nil {
		return err
	}
	if !slices.ContainsFunc(profiles, func(p componentaccess.Profile) bool { return len(p.ClusterRules) > 0 }) {
		return nil
	}
	c.ClusterAccess = &componentaccess.ClusterReconciler{Reader: mgr.GetCache(), APIReader: mgr.GetAPIReader(), Writer: mgr.GetClient(), Tenants: tenants, Profiles: profiles}
	return c.ClusterAccess.SetupWithManager(mgr)
}

// setupCSINodePlugin registers the CSI node plugin controller when o
// switches it on.
func setupCSINodePlugin(mgr ctrl.Manager, o Options, tenants tenant.Matcher, access *tenantconn.Access, c *Controllers) error {
	if !o.EnableCSINodePlugin {
		return nil
	}
	c.CSINodePlugin = &csinodeplugin.Reconciler{Reader: mgr.GetCache(), Tenants: tenants, Options: o.CSINodePlugin, Access: access}
	return c.CSINodePlugin.SetupWithManager(mgr)
}

// setupDeployments registers the CSI controller and CCM controllers that
// o switches on, and the removal of what switched-off ones left.
func setupDeployments(mgr ctrl.Manager, o Options, tenants tenant.Matcher, c *Controllers) error {
	if o.EnableCSIController && !o.EnableCSIAccess {
		return errors.New("the CSI controller needs the CSI access objects: enable CSI access")
	}
	var err error
	if o.EnableCSIController {
		if c.CSIController, err = setupComponent(mgr, o, tenants, tenantcomponents.CSI(), o.CSIController); err != nil {
			return err
		}
	}
	var off []tenantcomponents.Component
	if o.EnableCCM {
		if c.CCM, err = setupComponent(mgr, o, tenants, tenantcomponents.CCM(), o.CCM); err != nil {
			return err
		}
	} else {
		off = append(off, tenantcomponents.CCM())
	}
	if !o.EnableCSIController {
		csi := tenantcomponents.CSI()
		if o.EnableCSIAccess {
			// The CSI access objects, cluster-wide ones included, stay
			// while CSI access is on (setupAccess keeps them).
			csi.Access.ClusterRules = nil
		}
		off = append(off, csi)
	}
	cleanup := &tenantcomponents.SwitchedOff{Reader: mgr.GetAPIReader(), Writer: mgr.GetClient(), Tenants: tenants, Components: off}
	if err := mgr.Add(cleanup); err != nil {
		return fmt.Errorf("failed to add the removal of switched-off components: %w", err)
	}
	return nil
}

// setupComponent registers the controller of one component, its Secret
// name and key defaulting to TenantKubeconfig.
func setupComponent(mgr ctrl.Manager, o Options, tenants tenant.Matcher, comp tenantcomponents.Component, co tenantcomponents.Options) (*tenantcomponents.Reconciler, error) {
	secret := o.TenantKubeconfig.OrDefault()
	co.SecretName = cmp.Or(co.SecretName, secret.Name)
	co.SecretKey = cmp.Or(co.SecretKey, secret.Key)
	r := &tenantcomponents.Reconciler{
		Reader: mgr.GetCache(), Writer: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Component: comp, Tenants: tenants, Options: co,
	}
	return r, r.SetupWithManager(mgr)
}

// setupTenantClusters registers the TenantCluster controller when o
// switches it on, adding the TenantCluster types to the manager's scheme.
func setupTenantClusters(mgr ctrl.Manager, o Options, tenants tenant.Matcher, access *tenantconn.Access, c *Controllers) error {
	if !o.EnableTenantClusters {
		return nil
	}
	if err := infrav1alpha1.AddToScheme(mgr.GetScheme()); err != nil {
		return fmt.Errorf("failed to add the TenantCluster types to the scheme: %w", err)
	}
	c.TenantClusters = &tenantcluster.Reconciler{
		Client:              mgr.GetClient(),
		APIReader:           mgr.GetAPIReader(),
		Tenants:             tenants,
		KubeconfigSecret:    o.TenantKubeconfig.OrDefault().Name,
		KubeconfigSecretKey: o.TenantKubeconfig.OrDefault().Key,
		Tenant: &tenantcluster.TenantObjects{
			Clients: &access.Clients,
			Tenants: tenants,
			Addons:  []string{addons.KubeVirtCSI},
		},
		Connections:          &access.Clients,
		TenantCleanupTimeout: o.TenantCleanupTimeout,
		Recorder:             mgr.GetEventRecorder(tenantcluster.ControllerName),
		ImageCacheOff:        !o.EnableImageCache,
		NetworksOff:          !o.EnableNetworks,
	}
	return c.TenantClusters.SetupWithManager(mgr)
}

// setupVLANs registers the VLAN controller when o gives a template. It
// runs beside the TenantCluster controller, whose scheme it uses.
func setupVLANs(mgr ctrl.Manager, o Options, tenants tenant.Matcher, c *Controllers) error {
	if !o.VLANs.Enabled() {
		return nil
	}
	if !o.EnableTenantClusters {
		return errors.New("a VLAN per tenant cluster needs the TenantCluster controller: do not disable tenant clusters")
	}
	c.VLANs = &vlan.Reconciler{Reader: mgr.GetCache(), APIReader: mgr.GetAPIReader(), Writer: mgr.GetClient(), Tenants: tenants, Options: o.VLANs}
	return c.VLANs.SetupWithManager(mgr)
}

// setupNetworking registers the tenant network and NetworkPolicy
// controllers that o switches on.
func setupNetworking(mgr ctrl.Manager, o Options, tenants tenant.Matcher, c *Controllers) error {
	if o.EnableNetworks {
		c.Networks = &networks.Reconciler{Reader: mgr.GetCache(), APIReader: mgr.GetAPIReader(), Writer: mgr.GetClient(), Tenants: tenants}
		if err := c.Networks.SetupWithManager(mgr); err != nil {
			return err
		}
	}
	if o.EnableNetworkPolicies {
		c.NetworkPolicies = &netpol.Reconciler{Reader: mgr.GetCache(), APIReader: mgr.GetAPIReader(), Writer: mgr.GetClient(), Tenants: tenants, Options: o.NetworkPolicies}
		if err := c.NetworkPolicies.SetupWithManager(mgr); err != nil {
			return err
		}
	}
	return nil
}
