package flags

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/networks/vlan"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/chartrender"
)

// chartArgs renders the infra-controller chart with values and returns the
// arguments of its container.
func chartArgs(t *testing.T, values map[string]any) []string {
	t.Helper()
	return chartrender.ContainerArgs(t, "infra-controller", values, "infra-controller")
}

// renderChart renders the infra-controller chart with values and returns
// its files by name.
func renderChart(t *testing.T, values map[string]any) map[string]string {
	t.Helper()
	return chartrender.Files(t, "infra-controller", values)
}

// The release notes name a deprecated value while it is set, and only
// then.
func TestChartNotesDeprecatedValues(t *testing.T) {
	const notes = "infra-controller/templates/NOTES.txt"
	if got := renderChart(t, nil)[notes]; strings.Contains(got, "deprecated") {
		t.Errorf("the defaults render a deprecation notice:\n%s", got)
	}
	got := renderChart(t, map[string]any{"addons": false, "addonsResync": "1m", "networkPolicyCSIControllerCIDRs": []any{"10.0.0.1/32"}})[notes]
	for _, want := range []string{
		"Value addons is deprecated: use csiNodePlugin", "Value addonsResync is deprecated: use csiNodePluginResync",
		"Value networkPolicyCSIControllerCIDRs is deprecated: use networkPolicyAPIServerCIDRs",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("notes lack %q:\n%s", want, got)
		}
	}
}

// The chart's Deployment passes only flags the binary has, with values it
// accepts, and they reach the options.
func TestChartArgsParse(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		check  func(*testing.T, *Settings)
	}{
		{
			name:  "defaults",
			check: checkChartDefaults,
		},
		{
			name: "features and their settings",
			values: map[string]any{
				"performanceInstancetypes": true, "densityInstancetypes": true,
				"tenantNetworks": true, "imageCache": false, "imageCacheGracePeriod": "3h", "tenantCleanupTimeout": "25m",
				"csiNodePluginResync": "0", "networkPolicies": false, "defaultNetworkPolicies": false, "logDevelopment": true,
			},
			check: checkChartFeatures,
		},
		{
			name: "network policy lists",
			values: map[string]any{
				"networkPolicyPrivateCIDRs":   []any{"10.0.0.0/8", "fd00::/8"},
				"networkPolicyAllowedCIDRs":   []any{"203.0.113.0/24", "2001:db8::/32"},
				"networkPolicyNameservers":    []any{"192.0.2.53", "2001:db8::53"},
				"networkPolicyAPIServerCIDRs": []any{"198.51.100.10/32"},
			},
			check: checkChartNetworkPolicyLists,
		},
		{
			name:   "deprecated networkPolicyCSIControllerCIDRs still honoured",
			values: map[string]any{"networkPolicyCSIControllerCIDRs": []any{"198.51.100.11/32"}},
			check:  checkAPIServerCIDRs("198.51.100.11/32"),
		},
		{
			name: "deprecated networkPolicyCSIControllerCIDRs wins over the new name",
			values: map[string]any{
				"networkPolicyCSIControllerCIDRs": []any{"198.51.100.11/32"}, "networkPolicyAPIServerCIDRs": []any{"198.51.100.12/32"},
			},
			check: checkAPIServerCIDRs("198.51.100.11/32"),
		},
		{
			name: "switches off",
			values: map[string]any{"presets": false, "csiAccess": false, "storageClasses": false, "csiInfraServerURL": "https://infra:6443", "namespacePrefix": "tenant-",
				"clusterNetworkPoliciesNamespace": "kubevirt-kkp"},
			check: func(t *testing.T, f *Settings) {
				t.Helper()
				o := f.Options
				if o.Flavors.Presets || o.EnableCSIAccess || o.EnableStorageClasses || o.ComponentAccess.ServerURL != "https://infra:6443" || o.NamespacePrefix != "tenant-" ||
					o.NetworkPolicies.ClusterPoliciesNamespace != "kubevirt-kkp" {
					t.Errorf("options %+v", o)
				}
			},
		},
		{
			name:   "CSI node plugin off",
			values: map[string]any{"csiNodePlugin": false, "csiNodePluginResync": "2m"},
			check:  checkNodePlugin(false, 2*time.Minute),
		},
		{
			name:   "deprecated addons values still honoured, false included",
			values: map[string]any{"addons": false, "addonsResync": "1m"},
			check:  checkNodePlugin(false, time.Minute),
		},
		{
			name:   "deprecated addons values win over the new ones",
			values: map[string]any{"addons": true, "csiNodePlugin": false, "addonsResync": "1m", "csiNodePluginResync": "2m"},
			check:  checkNodePlugin(true, time.Minute),
		},
		{
			name: "a VLAN per tenant cluster",
			values: map[string]any{"tenantVLAN": map[string]any{
				"template": "ovs", "range": "200-299", "bridge": "br-ex", "mtu": 9000, "networkName": "vm-net", "workers": 2,
			}},
			check: func(t *testing.T, f *Settings) {
				t.Helper()
				want := vlan.Options{
					Template: vlan.TemplateOVS, Range: vlan.Range{First: 200, Last: 299}, Bridge: "br-ex", MTU: 9000,
					NetworkName: "vm-net", ClaimNamespace: "kubevirt-kkp", Workers: 2,
				}
				if diff := cmp.Diff(want, f.Options.VLANs); diff != "" {
					t.Errorf("VLAN options (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "cloud controller manager",
			values: map[string]any{
				"cloudControllerManager": true, "ccmLoadBalancer": false, "ccmZoneAndRegion": false,
				"ccmFeatureGates": map[string]any{"SomeGate": true, "OtherGate": false},
				"images":          map[string]any{"controller": "r/infra:1", "ccm": "r/ccm:1"},
			},
			check: func(t *testing.T, f *Settings) {
				t.Helper()
				p := f.Options.CCM.Params
				want := addons.FeatureGates{"SomeGate": true, "OtherGate": false}
				if !f.Options.EnableCCM || p.CCMLoadBalancer || p.CCMZoneAndRegion || p.CCMImage != "r/ccm:1" || !cmp.Equal(p.CCMFeatureGates, want) {
					t.Errorf("CCM on %t, params %+v", f.Options.EnableCCM, p)
				}
			},
		},
		{
			name: "CSI controller off, images overridden",
			values: map[string]any{"csiController": false, "csiImages": map[string]any{
				"driver": "r/d:1", "nodeDriverRegistrar": "r/n:1", "livenessProbe": "r/l:1",
				"provisioner": "r/p:1", "attacher": "r/a:1", "resizer": "r/r:1", "snapshotter": "r/s:1",
			}},
			check: func(t *testing.T, f *Settings) {
				t.Helper()
				o := f.Options
				want := addons.Params{
					DriverImage: "r/d:1", RegistrarImage: "r/n:1", LivenessProbeImage: "r/l:1",
					ProvisionerImage: "r/p:1", AttacherImage: "r/a:1", ResizerImage: "r/r:1", SnapshotterImage: "r/s:1",
				}
				if o.EnableCSIController || !cmp.Equal(o.CSIController.Params, want) || !cmp.Equal(o.CSINodePlugin.Images, want) {
					t.Errorf("CSI controller %t, images %+v and %+v", o.EnableCSIController, o.CSIController.Params, o.CSINodePlugin.Images)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse(chartArgs(t, tt.values), io.Discard)
			if err != nil {
				t.Fatalf("the binary refuses the chart's arguments: %v", err)
			}
			tt.check(t, f)
		})
	}
}

// checkChartDefaults checks the fixed flags of the chart and that every
// other default of the chart is the binary's own.
func checkChartDefaults(t *testing.T, f *Settings) {
	t.Helper()
	if !f.LeaderElect || f.LeaderElectionNamespace != "kubevirt-kkp" || f.MetricsAddr != ":8080" || f.ProbeAddr != ":8081" {
		t.Errorf("leader election %t in %q, metrics %q, probes %q", f.LeaderElect, f.LeaderElectionNamespace, f.MetricsAddr, f.ProbeAddr)
	}
	// Every other default of the chart is the binary's own.
	binary, err := Parse(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got := f.Options
	got.CSINodePlugin.Images, got.CSIController.Params = binary.Options.CSINodePlugin.Images, binary.Options.CSIController.Params
	if diff := cmp.Diff(binary.Options, got); diff != "" {
		t.Errorf("the chart's defaults differ from the binary's (-binary +chart):\n%s", diff)
	}
	if f.QPS != binary.QPS || f.Burst != binary.Burst || f.Development != binary.Development {
		t.Errorf("qps %v, burst %d, development %t; the binary's %v, %d, %t", f.QPS, f.Burst, f.Development, binary.QPS, binary.Burst, binary.Development)
	}
}

// checkNodePlugin returns a check of the CSI node plugin's switch and
// resync interval.
func checkNodePlugin(on bool, resync time.Duration) func(*testing.T, *Settings) {
	return func(t *testing.T, f *Settings) {
		t.Helper()
		if f.Options.EnableCSINodePlugin != on || f.Options.CSINodePlugin.ResyncInterval != resync {
			t.Errorf("CSI node plugin %t every %v, want %t every %v", f.Options.EnableCSINodePlugin, f.Options.CSINodePlugin.ResyncInterval, on, resync)
		}
	}
}

// checkChartFeatures checks the feature switches and settings of the
// "features and their settings" case.
func checkChartFeatures(t *testing.T, f *Settings) {
	t.Helper()
	o := f.Options
	if !o.Flavors.PerformanceInstancetypes || !o.Flavors.DensityInstancetypes {
		t.Errorf("instancetype series: performance %t, density %t", o.Flavors.PerformanceInstancetypes, o.Flavors.DensityInstancetypes)
	}
	if !o.EnableNetworks || o.EnableImageCache || o.ImageCache.GracePeriod != 3*time.Hour || o.TenantCleanupTimeout != 25*time.Minute ||
		o.CSINodePlugin.ResyncInterval != 0 || o.EnableNetworkPolicies || !o.NetworkPolicies.DisableDefaults || !f.Development {
		t.Errorf("development %t, options %+v", f.Development, o)
	}
}

// checkAPIServerCIDRs checks that the CSI controller and CCM pods may reach
// want and nothing else.
func checkAPIServerCIDRs(want ...string) func(*testing.T, *Settings) {
	return func(t *testing.T, f *Settings) {
		t.Helper()
		if got := f.Options.NetworkPolicies.APIServerCIDRs; !slices.Equal(got, want) {
			t.Errorf("API server CIDRs = %q, want %q", got, want)
		}
	}
}

// checkChartNetworkPolicyLists checks that the list values reach their
// flags, comma-separated.
func checkChartNetworkPolicyLists(t *testing.T, f *Settings) {
	t.Helper()
	got := f.Options.NetworkPolicies
	want := got
	want.PrivateCIDRs = []string{"10.0.0.0/8", "fd00::/8"}
	want.AllowedCIDRs = []string{"203.0.113.0/24", "2001:db8::/32"}
	want.Nameservers = []string{"192.0.2.53", "2001:db8::53"}
	want.APIServerCIDRs = []string{"198.51.100.10/32"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("network policy options (-want +got):\n%s", diff)
	}
}
