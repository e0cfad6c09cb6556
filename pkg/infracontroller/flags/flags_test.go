package flags

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/networks/vlan"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantcluster"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantconn"
)

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    func(o *infracontroller.Options)
		wantErr bool
	}{
		{name: "defaults switch everything on", args: nil, want: func(*infracontroller.Options) {}},
		{
			name: "switches and names",
			args: []string{
				"--namespace-prefix=tenant-", "--instancetypes=false", "--preferences=false", "--storage-classes=false",
				"--storage-class-bus=virtio", "--storage-class-resync=0", "--csi-access=false", "--csi-infra-server-url=https://infra:6443",
			},
			want: func(o *infracontroller.Options) {
				o.NamespacePrefix = "tenant-"
				o.Flavors.Instancetypes = false
				o.Flavors.Preferences = false
				o.EnableStorageClasses = false
				o.StorageClasses.Bus = "virtio"
				o.StorageClasses.ResyncInterval = 0
				o.EnableCSIAccess = false
				o.EnableCSIController = false
				o.ComponentAccess.ServerURL = "https://infra:6443"
			},
		},
		{
			name: "image cache, networks and policies",
			args: []string{
				"--image-cache=false", "--image-cache-grace-period=5m", "--tenant-networks", "--default-network-policies=false",
				"--network-policy-private-cidrs=10.0.0.0/8, 100.64.0.0/10", "--network-policy-allowed-cidrs=10.1.2.3/32",
				"--network-policy-nameservers=1.1.1.1",
			},
			want: func(o *infracontroller.Options) {
				o.EnableImageCache = false
				o.ImageCache.GracePeriod = 5 * time.Minute
				o.EnableNetworks = true
				o.NetworkPolicies.DisableDefaults = true
				o.NetworkPolicies.PrivateCIDRs = []string{"10.0.0.0/8", "100.64.0.0/10"}
				o.NetworkPolicies.AllowedCIDRs = []string{"10.1.2.3/32"}
				o.NetworkPolicies.Nameservers = []string{"1.1.1.1"}
			},
		},
		{name: "CSI node plugin off", args: []string{"--csi-node-plugin=false"}, want: func(o *infracontroller.Options) { o.EnableCSINodePlugin = false }},
		{name: "deprecated --addons still switches the node plugin", args: []string{"--addons=false"}, want: func(o *infracontroller.Options) { o.EnableCSINodePlugin = false }},
		{name: "the later of --addons and --csi-node-plugin wins", args: []string{"--addons=false", "--csi-node-plugin"}, want: func(*infracontroller.Options) {}},
		{name: "the later of --csi-node-plugin and --addons wins", args: []string{"--csi-node-plugin", "--addons=false"}, want: func(o *infracontroller.Options) { o.EnableCSINodePlugin = false }},
		{name: "CSI controller off", args: []string{"--csi-controller=false"}, want: func(o *infracontroller.Options) { o.EnableCSIController = false }},
		{
			name: "CSI images",
			args: []string{
				"--csi-driver-image=r/d:1", "--csi-node-driver-registrar-image=r/n:1", "--csi-livenessprobe-image=r/l:1",
				"--csi-provisioner-image=r/p:1", "--csi-attacher-image=r/a:1", "--csi-resizer-image=r/r:1",
				"--csi-snapshotter-image=r/s:1",
			},
			want: func(o *infracontroller.Options) {
				images := addons.Params{
					DriverImage: "r/d:1", RegistrarImage: "r/n:1", LivenessProbeImage: "r/l:1",
					ProvisionerImage: "r/p:1", AttacherImage: "r/a:1", ResizerImage: "r/r:1", SnapshotterImage: "r/s:1",
				}
				o.CSINodePlugin.Images, o.CSIController.Params = images, images
			},
		},
		{name: "resizer off: no expansion on tenant classes", args: []string{"--csi-resizer=false"}, want: func(o *infracontroller.Options) {
			o.CSIController.Params.DisableResizer, o.StorageClasses.DisableVolumeExpansion = true, true
		}},
		{name: "snapshots on: snapshotter and the driver's grant", args: []string{"--csi-snapshots"}, want: func(o *infracontroller.Options) {
			o.CSIController.Params.Snapshots, o.ComponentAccess.Snapshots, o.StorageClasses.Snapshots = true, true, true
		}},
		{
			name: "API server policy destinations",
			args: []string{"--network-policy-api-server-cidrs=10.0.0.1/32,203.0.113.0/24"},
			want: func(o *infracontroller.Options) {
				o.NetworkPolicies.APIServerCIDRs = []string{"10.0.0.1/32", "203.0.113.0/24"}
			},
		},
		{
			name: "deprecated --network-policy-csi-controller-cidrs still sets them",
			args: []string{"--network-policy-csi-controller-cidrs=10.0.0.1/32"},
			want: func(o *infracontroller.Options) { o.NetworkPolicies.APIServerCIDRs = []string{"10.0.0.1/32"} },
		},
		{
			name: "the later of the API server CIDR flags wins",
			args: []string{"--network-policy-api-server-cidrs=10.0.0.1/32", "--network-policy-csi-controller-cidrs=10.0.0.2/32"},
			want: func(o *infracontroller.Options) { o.NetworkPolicies.APIServerCIDRs = []string{"10.0.0.2/32"} },
		},
		{name: "an invalid API server CIDR is refused", args: []string{"--network-policy-api-server-cidrs=10.0.0.1"}, wantErr: true},
		{name: "an invalid CIDR of the deprecated flag is refused", args: []string{"--network-policy-csi-controller-cidrs=10.0.0.1"}, wantErr: true},
		{name: "CSI node plugin resync", args: []string{"--csi-node-plugin-resync=1m"}, want: func(o *infracontroller.Options) { o.CSINodePlugin.ResyncInterval = time.Minute }},
		{name: "deprecated --addons-resync still sets it", args: []string{"--addons-resync=1m"}, want: func(o *infracontroller.Options) { o.CSINodePlugin.ResyncInterval = time.Minute }},
		{name: "the later of the resync flags wins", args: []string{"--addons-resync=1m", "--csi-node-plugin-resync=2m"}, want: func(o *infracontroller.Options) { o.CSINodePlugin.ResyncInterval = 2 * time.Minute }},
		{name: "tenant clusters off", args: []string{"--tenant-clusters=false"}, want: func(o *infracontroller.Options) { o.EnableTenantClusters = false }},
		{name: "network policies off", args: []string{"--network-policies=false"}, want: func(o *infracontroller.Options) { o.EnableNetworkPolicies = false }},
		{name: "an invalid CIDR is refused", args: []string{"--network-policy-allowed-cidrs=10.0.0.0"}, wantErr: true},
		{name: "CCM off by default, on with its defaults", args: []string{"--cloud-controller-manager"}, want: func(o *infracontroller.Options) { o.EnableCCM = true }},
		{
			name: "CCM settings",
			args: []string{
				"--cloud-controller-manager", "--ccm-load-balancer=false", "--ccm-zone-and-region=false",
				"--ccm-feature-gates=SomeGate=true, OtherGate=false", "--ccm-image=r/ccm:1",
			},
			want: func(o *infracontroller.Options) {
				o.EnableCCM = true
				o.CCM.Params.CCMLoadBalancer, o.CCM.Params.CCMZoneAndRegion = false, false
				o.CCM.Params.CCMFeatureGates = addons.FeatureGates{"SomeGate": true, "OtherGate": false}
				o.CCM.Params.CCMImage = "r/ccm:1"
			},
		},
		{name: "CCM without CSI access", args: []string{"--cloud-controller-manager", "--csi-access=false"}, want: func(o *infracontroller.Options) {
			o.EnableCCM, o.EnableCSIAccess, o.EnableCSIController = true, false, false
		}},
		{
			name: "a VLAN per tenant cluster",
			args: []string{
				"--tenant-vlan-template=bridge", "--tenant-vlan-range=100-199", "--tenant-vlan-bridge=br-trunk", "--tenant-vlan-mtu=9000",
				"--tenant-vlan-network-name=vm-net", "--tenant-vlan-claim-namespace=kubevirt-kkp", "--tenant-vlan-workers=2",
			},
			want: func(o *infracontroller.Options) {
				o.VLANs = vlan.Options{
					Template: vlan.TemplateBridge, Range: vlan.Range{First: 100, Last: 199}, Bridge: "br-trunk", MTU: 9000,
					NetworkName: "vm-net", ClaimNamespace: "kubevirt-kkp", Workers: 2,
				}
			},
		},
		{name: "a VLAN template without a range is refused", args: []string{"--tenant-vlan-template=ovs", "--tenant-vlan-bridge=br-ex", "--tenant-vlan-claim-namespace=k"}, wantErr: true},
		{name: "an unknown VLAN template is refused", args: []string{"--tenant-vlan-template=macvlan", "--tenant-vlan-range=100-199", "--tenant-vlan-bridge=eth1", "--tenant-vlan-claim-namespace=k"}, wantErr: true},
		{name: "a VLAN range past 4094 is refused", args: []string{"--tenant-vlan-range=4000-4095"}, wantErr: true},
		{name: "empty prefix is refused", args: []string{"--namespace-prefix="}, wantErr: true},
		{name: "non-positive qps is refused", args: []string{"--kube-api-qps=0"}, wantErr: true},
		{name: "positional arguments are refused", args: []string{"extra"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse(tc.args, io.Discard)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Parse error = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			want := infracontroller.DefaultOptions()
			want.Flavors.MaxConcurrentReconciles = 8
			want.TenantKubeconfig = tenantconn.KubeconfigSecret{Name: "tenant-kubeconfig", Key: "kubeconfig"}
			want.StorageClasses.Bus = "scsi"
			want.StorageClasses.ResyncInterval = 10 * time.Minute
			want.EnableImageCache = true
			want.ImageCache.GracePeriod = time.Hour
			want.EnableTenantClusters = true
			want.TenantCleanupTimeout = tenantcluster.DefaultTenantCleanupTimeout
			want.EnableCSINodePlugin = true
			want.CSINodePlugin.ResyncInterval = 10 * time.Minute
			want.EnableCSIController = true
			defaultImages := addons.Params{
				DriverImage: addons.DefaultDriverImage, RegistrarImage: addons.DefaultRegistrarImage,
				LivenessProbeImage: addons.DefaultLivenessProbeImage, ProvisionerImage: addons.DefaultProvisionerImage,
				AttacherImage: addons.DefaultAttacherImage, ResizerImage: addons.DefaultResizerImage,
			}
			want.CSINodePlugin.Images, want.CSIController.Params = defaultImages, defaultImages
			want.CCM.Params.CCMImage = addons.DefaultCCMImage
			tc.want(&want)
			if diff := cmp.Diff(want, f.Options, cmp.AllowUnexported(infracontroller.Options{})); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseFlagsCCMFeatureGatesRefused(t *testing.T) {
	for _, value := range []string{"SomeGate", "SomeGate=maybe", "some-gate=true"} {
		_, err := Parse([]string{"--ccm-feature-gates=" + value}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "-ccm-feature-gates") {
			t.Errorf("%q: got error %v, want one naming the flag", value, err)
		}
	}
}

// The old flag names stay accepted and their help points at the new ones.
func TestParseFlagsDeprecatedNamesDocumented(t *testing.T) {
	var help strings.Builder
	if _, err := Parse([]string{"--help"}, &help); err == nil {
		t.Fatal("--help parsed without the flag package's ErrHelp")
	}
	for _, want := range []string{"Deprecated: use --csi-node-plugin ", "Deprecated: use --csi-node-plugin-resync "} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, help.String())
		}
	}
}

// TestParseRefusesOutOfRange: counts, intervals and rates out of range are
// refused with the flag and what it accepts, instead of being replaced by
// a default or clamped to 0 by the controllers.
func TestParseRefusesOutOfRange(t *testing.T) {
	for _, tc := range []struct {
		arg, want string
	}{
		{"--kube-api-qps=NaN", "--kube-api-qps NaN: must be a finite number above 0"},
		{"--kube-api-qps=+Inf", "--kube-api-qps +Inf: must be a finite number above 0"},
		{"--kube-api-qps=1e39", "--kube-api-qps 1e+39: must be a finite number above 0"},
		{"--kube-api-qps=-5", "--kube-api-qps -5: must be a finite number above 0"},
		{"--kube-api-qps=0", "--kube-api-qps 0: must be a finite number above 0"},
		{"--kube-api-burst=0", "--kube-api-burst 0: must be at least 1"},
		{"--flavor-workers=-3", "--flavor-workers -3: must be between 1 and 1000"},
		{"--flavor-workers=0", "--flavor-workers 0: must be between 1 and 1000"},
		{"--flavor-workers=1000000", "--flavor-workers 1000000: must be between 1 and 1000"},
		{"--tenant-vlan-workers=-1", "--tenant-vlan-workers -1: must be between 1 and 1000"},
		{"--storage-class-resync=-1m", "--storage-class-resync -1m0s: must be 0 (off) or at least 1s"},
		{"--storage-class-resync=1ns", "--storage-class-resync 1ns: must be 0 (off) or at least 1s"},
		{"--csi-node-plugin-resync=-1s", "--csi-node-plugin-resync (or --addons-resync) -1s: must be 0 (off) or at least 1s"},
		{"--addons-resync=-1s", "--csi-node-plugin-resync (or --addons-resync) -1s: must be 0 (off) or at least 1s"},
		{"--tenant-cleanup-timeout=-10m", "--tenant-cleanup-timeout -10m0s: must be above 0"},
		{"--tenant-cleanup-timeout=0", "--tenant-cleanup-timeout 0s: must be above 0"},
		{"--image-cache-grace-period=-1h", "--image-cache-grace-period -1h0m0s: must be above 0"},
		{"--tenant-vlan-range=0-5000", `VLAN range 0-5000: ids must be between 1 and 4094`},
		{"--tenant-vlan-range=5-3", `VLAN range 5-3: ids must be between 1 and 4094, the first not above the last`},
		{"--network-policy-allowed-cidrs=10.0.0.0/33,not-a-cidr", `for flag -network-policy-allowed-cidrs: "10.0.0.0/33" is not a CIDR (an address and a prefix length, e.g. 10.0.0.0/8 or fd00::/8); "not-a-cidr" is not a CIDR`},
		{"--network-policy-private-cidrs=10.0.0.0", `for flag -network-policy-private-cidrs: "10.0.0.0" is not a CIDR`},
		{"--network-policy-csi-controller-cidrs=10.0.0.1", `for flag -network-policy-csi-controller-cidrs: "10.0.0.1" is not a CIDR`},
		{"--network-policy-nameservers=1.1.1.1/32", `for flag -network-policy-nameservers: "1.1.1.1/32" is not an IP address`},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			_, err := Parse([]string{tc.arg}, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	t.Run("every problem at once", func(t *testing.T) {
		_, err := Parse([]string{"--flavor-workers=-1", "--storage-class-resync=-1s", "--kube-api-qps=NaN"}, io.Discard)
		for _, want := range []string{"--flavor-workers -1", "--storage-class-resync -1s", "--kube-api-qps NaN"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v lacks %q", err, want)
			}
		}
	})
	t.Run("the bounds themselves are accepted", func(t *testing.T) {
		args := []string{"--flavor-workers=1000", "--tenant-vlan-workers=1", "--storage-class-resync=1s", "--csi-node-plugin-resync=0",
			"--tenant-cleanup-timeout=1ns", "--kube-api-qps=0.001", "--kube-api-burst=1"}
		if _, err := Parse(args, io.Discard); err != nil {
			t.Error(err)
		}
	})
}
