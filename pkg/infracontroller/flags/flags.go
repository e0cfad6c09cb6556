// Package flags is the command line of the infra-controller: its flags and
// the values each accepts. cmd/infra-controller runs with what Parse
// returns, and kubevirt-installer calls Parse on the arguments the
// infra-controller chart renders, so a value the binary would refuse is
// refused before the installer writes anything.
package flags

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/flavors"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/imagecache"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/netpol"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/networks/vlan"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/storageclass"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantcluster"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantconn"
)

// Bounds of the counts and intervals the flags accept.
const (
	// MaxWorkers bounds --flavor-workers and --tenant-vlan-workers: each
	// worker is a goroutine waiting for its writes, and more than this
	// many only queue at the API server's Priority and Fairness.
	MaxWorkers = 1000
	// MinResync is the shortest resync interval that is not 0 (off): a
	// shorter one re-applies every tenant cluster in a busy loop.
	MinResync = time.Second
)

// Settings are the parsed command line.
type Settings struct {
	// Kubeconfig is the infra cluster's kubeconfig file; empty uses
	// KUBECONFIG or the in-cluster config.
	Kubeconfig string
	// MetricsAddr and ProbeAddr are the addresses of the metrics and
	// health endpoints.
	MetricsAddr, ProbeAddr string
	// LeaderElect turns leader election on, with its Lease in
	// LeaderElectionNamespace.
	LeaderElect             bool
	LeaderElectionNamespace string
	// QPS and Burst limit the client of the infra API server.
	QPS   float32
	Burst int
	// Development writes human-readable debug logs instead of JSON.
	Development bool
	// Options are the controllers' options.
	Options infracontroller.Options
}

// pending holds the flags that set several options at once, or whose
// value is checked before it is stored.
type pending struct {
	qps                                           float64
	csiController, resizer, snapshots, imageCache *bool
	nodePlugin, defaultPolicies                   *bool
	images                                        *addons.Params
}

// Parse parses args, the arguments of the infra-controller binary; usage
// and errors go to out. Every value out of range is refused, all at once,
// naming its flag and what the flag accepts.
func Parse(args []string, out io.Writer) (*Settings, error) {
	s := &Settings{Options: infracontroller.DefaultOptions()}
	fs := flag.NewFlagSet("infra-controller", flag.ContinueOnError)
	fs.SetOutput(out)
	p := &pending{}
	s.processFlags(fs, p)
	flavorFlags(fs, &s.Options)
	storageFlags(fs, &s.Options, p)
	networkFlags(fs, &s.Options, p)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	s.apply(p)
	if err := s.validate(p.qps); err != nil {
		return nil, err
	}
	return s, nil
}

// processFlags registers the flags of the process: its connection to the
// infra cluster, endpoints, leader election and logs.
func (s *Settings) processFlags(fs *flag.FlagSet, p *pending) {
	fs.StringVar(&s.Kubeconfig, "kubeconfig", "", "Kubeconfig file of the infra cluster; KUBECONFIG or the in-cluster config when empty.")
	fs.StringVar(&s.MetricsAddr, "metrics-bind-address", ":8080", "Address of the Prometheus metrics endpoint; 0 turns it off.")
	fs.StringVar(&s.ProbeAddr, "health-probe-bind-address", ":8081", "Address serving /healthz and /readyz.")
	fs.BoolVar(&s.LeaderElect, "leader-elect", false, "Elect a leader so only one replica reconciles.")
	fs.StringVar(&s.LeaderElectionNamespace, "leader-election-namespace", "", "Namespace of the leader-election Lease; the pod's namespace when empty.")
	fs.Float64Var(&p.qps, "kube-api-qps", infracontroller.DefaultKubeAPIQPS, "Client-side request rate limit against the infra API server (a finite number above 0). High because a change of a preset, a default policy or an infra StorageClass costs one write per tenant namespace at once; the API server's Priority and Fairness protects it.")
	fs.IntVar(&s.Burst, "kube-api-burst", infracontroller.DefaultKubeAPIBurst, "Client-side request burst against the infra API server (at least 1); large enough for one write per tenant namespace at once.")
	fs.BoolVar(&s.Development, "log-development", false, "Human-readable debug logs instead of JSON.")
	fs.StringVar(&s.Options.NamespacePrefix, "namespace-prefix", s.Options.NamespacePrefix, "Name prefix of tenant namespaces.")
}

// flavorFlags registers the flags of presets, instancetypes and
// preferences.
func flavorFlags(fs *flag.FlagSet, o *infracontroller.Options) {
	fs.StringVar(&o.Flavors.SourceNamespace, "preset-source-namespace", o.Flavors.SourceNamespace, "Namespace whose VirtualMachineInstancePresets are copied into tenant namespaces.")
	fs.BoolVar(&o.Flavors.Presets, "presets", o.Flavors.Presets, "Copy presets and offer kubermatic-standard; false deletes the copies made earlier.")
	fs.BoolVar(&o.Flavors.Instancetypes, "instancetypes", o.Flavors.Instancetypes, "Offer instancetypes standard-2/4/8; false deletes them.")
	fs.BoolVar(&o.Flavors.Preferences, "preferences", o.Flavors.Preferences, "Offer preference sockets-advantage; false deletes it.")
	fs.BoolVar(&o.Flavors.PerformanceInstancetypes, "performance-instancetypes", false, "Offer instancetypes performance-2/4/8 (dedicated CPUs, isolated emulator thread, 2Mi huge pages, shared I/O thread; needs the CPU manager and huge pages on infra nodes); false deletes them.")
	fs.BoolVar(&o.Flavors.DensityInstancetypes, "density-instancetypes", false, "Offer instancetypes density-2/4/8 (oversubscribed CPUs, 25% memory overcommit); false deletes them.")
	fs.IntVar(&o.Flavors.MaxConcurrentReconciles, "flavor-workers", flavors.DefaultWorkers, fmt.Sprintf("Tenant namespaces whose flavors are synced at once (1 to %d); each waits mostly for its one write, so they bound how fast a preset change spreads.", MaxWorkers))
}

// storageFlags registers the flags of storage classes, the CSI driver, the
// cloud controller manager, the image cache and TenantClusters.
func storageFlags(fs *flag.FlagSet, o *infracontroller.Options, p *pending) {
	fs.BoolVar(&o.EnableStorageClasses, "storage-classes", o.EnableStorageClasses, "Initialize annotated infra storage classes in tenant clusters.")
	fs.StringVar(&o.TenantKubeconfig.Name, "tenant-kubeconfig-secret", tenantconn.DefaultKubeconfigSecretName, "Secret in each tenant namespace holding the tenant cluster's kubeconfig.")
	fs.StringVar(&o.TenantKubeconfig.Key, "tenant-kubeconfig-key", tenantconn.DefaultKubeconfigSecretKey, "Key of the kubeconfig in that Secret.")
	fs.StringVar(&o.StorageClasses.Bus, "storage-class-bus", storageclass.DefaultBus, "Default disk bus of tenant storage classes.")
	fs.DurationVar(&o.StorageClasses.ResyncInterval, "storage-class-resync", 10*time.Minute, "How often tenant storage classes are re-checked, a safety net beside the watch of tenant clusters; 0 turns it off, else at least "+MinResync.String()+".")
	fs.BoolVar(&o.EnableCSIAccess, "csi-access", o.EnableCSIAccess, "Keep the CSI driver's ServiceAccount, Role, token and kubeconfig Secret in tenant namespaces.")
	fs.StringVar(&o.ComponentAccess.ServerURL, "csi-infra-server-url", "", "Infra API server address in the CSI controller's kubeconfig; the controller's own when empty.")
	p.csiController = fs.Bool("csi-controller", true, "Run the controller side of each tenant's KubeVirt CSI driver in its tenant namespace (needs --csi-access).")
	p.images = csiImageFlags(fs)
	p.resizer = fs.Bool("csi-resizer", true, "Run the CSI external-resizer in the CSI controller; false also keeps allowVolumeExpansion off on tenant storage classes.")
	p.snapshots = fs.Bool("csi-snapshots", false, "Run the CSI external-snapshotter in the CSI controller, grant the driver VolumeSnapshots in its tenant namespace and make a tenant VolumeSnapshotClass per storage class whose infra class names one (installs the snapshot CRDs in tenant clusters that lack them; tenant clusters need the snapshot-controller).")
	p.nodePlugin = csiNodePluginFlags(fs, &o.CSINodePlugin.ResyncInterval)
	fs.BoolVar(&o.EnableCCM, "cloud-controller-manager", false, "Run each tenant's KubeVirt cloud controller manager in its tenant namespace, with its own infra ServiceAccount (LoadBalancer Services, node zones and regions).")
	fs.BoolVar(&o.CCM.Params.CCMLoadBalancer, "ccm-load-balancer", o.CCM.Params.CCMLoadBalancer, "Let the cloud controller manager expose tenant LoadBalancer Services as Services in the tenant namespace that select the tenant's VMs.")
	fs.BoolVar(&o.CCM.Params.CCMZoneAndRegion, "ccm-zone-and-region", o.CCM.Params.CCMZoneAndRegion, "Let the cloud controller manager label tenant Nodes with the topology region and zone of the infra node their VM runs on (reads infra Nodes).")
	fs.Func("ccm-feature-gates", "Comma-separated Name=true|false feature gates of the cloud controller manager (--feature-gates).", featureGates(&o.CCM.Params.CCMFeatureGates))
	fs.StringVar(&o.CCM.Params.CCMImage, "ccm-image", addons.DefaultCCMImage, "Image of the KubeVirt cloud controller manager.")
	p.imageCache = fs.Bool("image-cache", true, "Import the named images of ConfigMap image-cache and remove unused cache DataVolumes (needs CDI).")
	fs.DurationVar(&o.ImageCache.GracePeriod, "image-cache-grace-period", imagecache.DefaultGracePeriod, "How long a cache DataVolume no VM refers to is kept (above 0).")
	fs.BoolVar(&o.EnableTenantClusters, "tenant-clusters", true, "Keep the namespaces of TenantCluster objects and tear them down, VMs first (needs the TenantCluster CRD).")
	fs.DurationVar(&o.TenantCleanupTimeout, "tenant-cleanup-timeout", tenantcluster.DefaultTenantCleanupTimeout, "How long deleting a TenantCluster retries a failing tenant cluster before it leaves our objects there (above 0).")
}

// networkFlags registers the flags of tenant networks, VLANs and
// NetworkPolicies.
func networkFlags(fs *flag.FlagSet, o *infracontroller.Options, p *pending) {
	fs.BoolVar(&o.EnableNetworks, "tenant-networks", false, "Turn the CNI configurations of ConfigMap tenant-networks into NetworkAttachmentDefinitions (needs Multus).")
	vlanFlags(fs, &o.VLANs)
	fs.BoolVar(&o.EnableNetworkPolicies, "network-policies", o.EnableNetworkPolicies, "Keep default and custom NetworkPolicies in tenant namespaces.")
	p.defaultPolicies = fs.Bool("default-network-policies", true, "Keep the default isolation policies; false deletes them.")
	fs.Func("network-policy-private-cidrs", "Comma-separated CIDRs the Internet egress rule excludes (default "+strings.Join(netpol.DefaultPrivateCIDRs, ",")+").", addresses(&o.NetworkPolicies.PrivateCIDRs, cidr))
	fs.Func("network-policy-allowed-cidrs", "Comma-separated further egress destinations, e.g. the tenant API servers.", addresses(&o.NetworkPolicies.AllowedCIDRs, cidr))
	fs.StringVar(&o.NetworkPolicies.ClusterPoliciesNamespace, "cluster-network-policies-namespace", "", "Namespace whose ConfigMap network-policies lists custom NetworkPolicies for every tenant namespace (a tenant's own of the same name wins); empty turns them off.")
	fs.Func("network-policy-nameservers", "Comma-separated DNS server addresses allowed on port 53 besides the cluster DNS.", addresses(&o.NetworkPolicies.Nameservers, ip))
	// --network-policy-csi-controller-cidrs is the name the flag had
	// before the CCM shared it; both set one variable, the later wins.
	apiServers := addresses(&o.NetworkPolicies.APIServerCIDRs, cidr)
	fs.Func("network-policy-api-server-cidrs", "Comma-separated destinations the CSI controller and cloud controller manager pods may reach over TCP: the infra and tenant API servers (default every address).", apiServers)
	fs.Func("network-policy-csi-controller-cidrs", "Deprecated: use --network-policy-api-server-cidrs (the later of the two wins).", apiServers)
}

// apply sets the options the pending flags decide.
func (s *Settings) apply(p *pending) {
	o := &s.Options
	s.QPS = float32(p.qps)
	o.EnableCSINodePlugin = *p.nodePlugin
	o.EnableCSIController = *p.csiController && o.EnableCSIAccess
	o.CSINodePlugin.Images, o.CSIController.Params = *p.images, *p.images
	o.CSIController.Params.DisableResizer, o.StorageClasses.DisableVolumeExpansion = !*p.resizer, !*p.resizer
	o.CSIController.Params.Snapshots, o.ComponentAccess.Snapshots, o.StorageClasses.Snapshots = *p.snapshots, *p.snapshots, *p.snapshots
	o.EnableImageCache = *p.imageCache
	o.NetworkPolicies.DisableDefaults = !*p.defaultPolicies
}

// validate refuses every value out of range, naming its flag and what the
// flag accepts. The controllers' own defaults for zero and negative values
// (a default worker count, a default timeout) are for callers of the
// packages; on the command line such a value is a mistake to report, not to
// rewrite.
func (s *Settings) validate(qps float64) error {
	o := s.Options
	var errs []error
	add := func(bad bool, format string, args ...any) {
		if bad {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	add(o.NamespacePrefix == "", "--namespace-prefix must not be empty")
	// !(qps > 0) is also true for NaN; float32 turns values past its
	// range into +Inf.
	add(!(qps > 0) || qps > math.MaxFloat32, "--kube-api-qps %v: must be a finite number above 0", qps)
	add(s.Burst < 1, "--kube-api-burst %d: must be at least 1", s.Burst)
	add(o.Flavors.MaxConcurrentReconciles < 1 || o.Flavors.MaxConcurrentReconciles > MaxWorkers,
		"--flavor-workers %d: must be between 1 and %d", o.Flavors.MaxConcurrentReconciles, MaxWorkers)
	add(o.VLANs.Workers < 1 || o.VLANs.Workers > MaxWorkers, "--tenant-vlan-workers %d: must be between 1 and %d", o.VLANs.Workers, MaxWorkers)
	add(badResync(o.StorageClasses.ResyncInterval), "--storage-class-resync %s: must be 0 (off) or at least %s", o.StorageClasses.ResyncInterval, MinResync)
	add(badResync(o.CSINodePlugin.ResyncInterval), "--csi-node-plugin-resync (or --addons-resync) %s: must be 0 (off) or at least %s", o.CSINodePlugin.ResyncInterval, MinResync)
	add(o.TenantCleanupTimeout <= 0, "--tenant-cleanup-timeout %s: must be above 0", o.TenantCleanupTimeout)
	add(o.ImageCache.GracePeriod <= 0, "--image-cache-grace-period %s: must be above 0", o.ImageCache.GracePeriod)
	errs = append(errs, o.NetworkPolicies.Validate(), o.VLANs.Validate())
	return errors.Join(errs...)
}

// badResync reports whether d is neither 0 (off) nor at least MinResync.
func badResync(d time.Duration) bool {
	return d != 0 && d < MinResync
}

// csiNodePluginFlags registers the switch and resync interval of the CSI
// node plugin under their names and under the deprecated names they had
// (--addons, --addons-resync), which keep deployed command lines working.
// Each pair shares one variable, so the later of the two on the command
// line wins.
func csiNodePluginFlags(fs *flag.FlagSet, resync *time.Duration) *bool {
	on := new(bool)
	fs.BoolVar(on, "csi-node-plugin", true, "Apply the tenant-cluster side of the KubeVirt CSI driver (the node plugin, addons/kubevirt-csi) to tenant clusters with a kubeconfig Secret.")
	fs.BoolVar(on, "addons", true, "Deprecated: use --csi-node-plugin (the later of the two wins).")
	fs.DurationVar(resync, "csi-node-plugin-resync", 10*time.Minute, "How often the CSI node plugin is re-applied to each tenant cluster, a safety net beside the watch of tenant clusters; 0 turns it off, else at least "+MinResync.String()+".")
	fs.DurationVar(resync, "addons-resync", 10*time.Minute, "Deprecated: use --csi-node-plugin-resync (the later of the two wins).")
	return on
}

// vlanFlags registers the flags of a VLAN per tenant cluster.
func vlanFlags(fs *flag.FlagSet, o *vlan.Options) {
	fs.Func("tenant-vlan-template", "Give every TenantCluster a VLAN id and a NetworkAttachmentDefinition on it: bridge (a Linux bridge on the infra nodes, CNI bridge plugin) or ovs (an Open vSwitch bridge, ovs-cni); empty turns it off (needs Multus).", func(v string) error {
		o.Template = vlan.Template(v)
		return nil
	})
	fs.Func("tenant-vlan-range", "VLAN ids tenant clusters get, <first>-<last> (e.g. 100-199), each claimed by one TenantCluster at a time.", func(v string) error {
		r, err := vlan.ParseRange(v)
		o.Range = r
		return err
	})
	fs.StringVar(&o.Bridge, "tenant-vlan-bridge", "", "Bridge on every infra node that VMs are attached to; its uplink must carry the VLAN range tagged.")
	fs.IntVar(&o.MTU, "tenant-vlan-mtu", 0, "MTU of the VMs' interfaces on the VLAN network; 0 keeps the plugin's default.")
	fs.StringVar(&o.NetworkName, "tenant-vlan-network-name", o.NetworkName, "Name of the NetworkAttachmentDefinition in every tenant namespace, the name MachineDeployments attach.")
	fs.StringVar(&o.ClaimNamespace, "tenant-vlan-claim-namespace", "", "Namespace of the VLAN claims, one Lease per claimed id (the chart uses its release namespace).")
	fs.IntVar(&o.Workers, "tenant-vlan-workers", o.Workers, fmt.Sprintf("TenantClusters whose VLANs are reconciled at once (1 to %d).", MaxWorkers))
}

// csiImageFlags registers the image flags of the KubeVirt CSI driver,
// shared by the node plugin and the controller.
func csiImageFlags(fs *flag.FlagSet) *addons.Params {
	p := &addons.Params{}
	fs.StringVar(&p.DriverImage, "csi-driver-image", addons.DefaultDriverImage, "Image of the KubeVirt CSI driver (node plugin and controller).")
	fs.StringVar(&p.RegistrarImage, "csi-node-driver-registrar-image", addons.DefaultRegistrarImage, "Image of the CSI node-driver-registrar (node plugin).")
	fs.StringVar(&p.LivenessProbeImage, "csi-livenessprobe-image", addons.DefaultLivenessProbeImage, "Image of the CSI liveness probe (node plugin and controller).")
	fs.StringVar(&p.ProvisionerImage, "csi-provisioner-image", addons.DefaultProvisionerImage, "Image of the CSI external-provisioner (controller).")
	fs.StringVar(&p.AttacherImage, "csi-attacher-image", addons.DefaultAttacherImage, "Image of the CSI external-attacher (controller).")
	fs.StringVar(&p.ResizerImage, "csi-resizer-image", addons.DefaultResizerImage, "Image of the CSI external-resizer (controller).")
	fs.StringVar(&p.SnapshotterImage, "csi-snapshotter-image", "", "Image of the CSI external-snapshotter (controller, with --csi-snapshots); "+addons.DefaultSnapshotterImage+" when empty.")
	return p
}

// featureGates returns a flag.Func that sets *dst to parsed feature gates.
func featureGates(dst *addons.FeatureGates) func(string) error {
	return func(value string) error {
		gates, err := addons.ParseFeatureGates(value)
		if err != nil {
			return err
		}
		*dst = gates
		return nil
	}
}

// addresses returns a flag.Func that sets *dst to a comma-separated list
// whose every item check accepts; the error names each refused item.
func addresses(dst *[]string, check func(string) error) func(string) error {
	return func(value string) error {
		*dst = nil
		var refused []string
		for _, item := range strings.Split(value, ",") {
			if item = strings.TrimSpace(item); item == "" {
				continue
			}
			if err := check(item); err != nil {
				refused = append(refused, err.Error())
			}
			*dst = append(*dst, item)
		}
		if len(refused) > 0 {
			return errors.New(strings.Join(refused, "; "))
		}
		return nil
	}
}

// cidr checks that s is a CIDR.
func cidr(s string) error {
	if _, _, err := net.ParseCIDR(s); err != nil {
		return fmt.Errorf("%q is not a CIDR (an address and a prefix length, e.g. 10.0.0.0/8 or fd00::/8)", s)
	}
	return nil
}

// ip checks that s is an IP address.
func ip(s string) error {
	if net.ParseIP(s) == nil {
		return fmt.Errorf("%q is not an IP address", s)
	}
	return nil
}
