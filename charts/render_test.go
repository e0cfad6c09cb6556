package charts_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// field returns the value at a dotted path of obj; list elements are
// addressed by index ("containers.0").
func field(t *testing.T, obj *unstructured.Unstructured, path string) any {
	t.Helper()
	var cur any = obj.Object
	for _, part := range strings.Split(path, ".") {
		switch v := cur.(type) {
		case map[string]any:
			cur = v[part]
		case []any:
			var i int
			if _, err := fmt.Sscanf(part, "%d", &i); err != nil || i >= len(v) {
				t.Fatalf("%s: no element %s in %v", path, part, v)
			}
			cur = v[i]
		default:
			return nil
		}
	}
	return cur
}

func mustRender(t *testing.T, chart string, values map[string]any) map[string]*unstructured.Unstructured {
	t.Helper()
	objects, err := render(t, chart, values)
	if err != nil {
		t.Fatalf("failed to render %s with %v: %v", chart, values, err)
	}
	return objects
}

func TestKubeVirtResource(t *testing.T) {
	// KKP's documented gate set, and HostDevices for GPU and device passthrough.
	defaultGates := []any{"ExperimentalIgnitionSupport", "DataVolumes", "LiveMigration", "CPUManager", "CPUNodeDiscovery", "Sidecar", "Snapshot", "HotplugVolumes", "HostDevices"}
	tests := []struct {
		name   string
		values map[string]any
		want   map[string]any // dotted path in the KubeVirt resource -> value
	}{
		{
			name: "defaults carry the KKP feature gates and no emulation",
			want: map[string]any{
				"spec.configuration.developerConfiguration.featureGates": defaultGates,
				"spec.configuration.developerConfiguration.useEmulation": nil,
				"spec.imagePullPolicy":   "IfNotPresent",
				"spec.uninstallStrategy": "BlockUninstallIfWorkloadsExist",
				"spec.monitorNamespace":  nil,
				"spec.infra":             nil,
				"spec.workloads":         nil,
			},
		},
		{
			name: "emulation, monitoring, placement, pull policy and uninstall strategy",
			values: map[string]any{
				"useEmulation":      true,
				"monitorNamespace":  "monitoring",
				"monitorAccount":    "prometheus-k8s",
				"imagePullPolicy":   "Always",
				"imagePullSecrets":  []any{"mirror"},
				"uninstallStrategy": "RemoveWorkloads",
				"infra":             map[string]any{"nodePlacement": map[string]any{"nodeSelector": map[string]any{"role": "infra"}}, "replicas": 3},
				"workloads":         map[string]any{"nodePlacement": map[string]any{"nodeSelector": map[string]any{"kvm": "true"}}},
			},
			want: map[string]any{
				"spec.configuration.developerConfiguration.useEmulation": true,
				"spec.monitorNamespace":                                  "monitoring",
				"spec.monitorAccount":                                    "prometheus-k8s",
				"spec.imagePullPolicy":                                   "Always",
				"spec.imagePullSecrets":                                  []any{map[string]any{"name": "mirror"}},
				"spec.uninstallStrategy":                                 "RemoveWorkloads",
				"spec.infra.nodePlacement.nodeSelector.role":             "infra",
				"spec.infra.replicas":                                    float64(3),
				"spec.workloads.nodePlacement.nodeSelector.kvm":          "true",
			},
		},
		{
			name: "extra and disabled gates; configuration is merged",
			values: map[string]any{
				"extraFeatureGates":    []any{"VMExport", "Snapshot"},
				"disabledFeatureGates": []any{"ImageVolume"},
				"configuration": map[string]any{
					"developerConfiguration": map[string]any{"cpuAllocationRatio": 4},
					"vmStateStorageClass":    "fast",
				},
			},
			want: map[string]any{
				"spec.configuration.developerConfiguration.featureGates":         append(append([]any{}, defaultGates...), "VMExport"),
				"spec.configuration.developerConfiguration.disabledFeatureGates": []any{"ImageVolume"},
				"spec.configuration.developerConfiguration.cpuAllocationRatio":   float64(4),
				"spec.configuration.vmStateStorageClass":                         "fast",
			},
		},
		{
			name: "permitted host devices",
			values: map[string]any{"permittedHostDevices": map[string]any{
				"pciHostDevices": []any{map[string]any{"pciVendorSelector": "10DE:1EB8", "resourceName": "nvidia.com/TU104GL_Tesla_T4"}},
			}},
			want: map[string]any{
				"spec.configuration.permittedHostDevices.pciHostDevices": []any{map[string]any{"pciVendorSelector": "10DE:1EB8", "resourceName": "nvidia.com/TU104GL_Tesla_T4"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kv := mustRender(t, "kubevirt", tt.values)["KubeVirt/kubevirt"]
			if kv == nil {
				t.Fatal("no KubeVirt resource rendered")
			}
			for path, want := range tt.want {
				if diff := cmp.Diff(want, field(t, kv, path)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", path, diff)
				}
			}
		})
	}
}

// TestKubeVirtFeatureGatesOnlyThroughTheirValues: a gate both enabled and
// disabled is refused, and so are gates set through the configuration
// pass-through, where they escaped that check (an enabled gate replaced
// without a word, LiveMigration both enabled and disabled).
func TestKubeVirtFeatureGatesOnlyThroughTheirValues(t *testing.T) {
	for _, tt := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"disabledFeatureGates": []any{"Snapshot"}}, "feature gate Snapshot is both enabled and disabled"},
		{map[string]any{"configuration": map[string]any{"developerConfiguration": map[string]any{"featureGates": []any{"NoSuchGate"}}}},
			"configuration.developerConfiguration.featureGates cannot be set: enable feature gates with the values featureGates (the KKP set, replaced as a whole) or extraFeatureGates (added to it)"},
		{map[string]any{"configuration": map[string]any{"developerConfiguration": map[string]any{"disabledFeatureGates": []any{"LiveMigration"}}}},
			"configuration.developerConfiguration.disabledFeatureGates cannot be set: disable feature gates with the value disabledFeatureGates, which must not name an enabled gate"},
	} {
		t.Run(fmt.Sprint(tt.values), func(t *testing.T) {
			_, err := render(t, "kubevirt", tt.values)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCDIResource(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		want   map[string]any
	}{
		{
			name: "defaults",
			want: map[string]any{
				"spec.config.featureGates":             []any{"HonorWaitForFirstConsumer"},
				"spec.config.importProxy":              nil,
				"spec.config.insecureRegistries":       nil,
				"spec.infra.nodeSelector":              map[string]any{"kubernetes.io/os": "linux"},
				"spec.workload.tolerations":            nil,
				"spec.uninstallStrategy":               "BlockUninstallIfWorkloadsExist",
				"spec.config.scratchSpaceStorageClass": nil,
			},
		},
		{
			name: "importer proxy, insecure registries, scratch space class and pull secrets",
			values: map[string]any{
				"importProxy": map[string]any{
					"httpProxy": "http://proxy:3128", "httpsProxy": "http://proxy:3128",
					"noProxy": ".svc,10.0.0.0/8", "trustedCAConfigMap": "proxy-ca",
				},
				"insecureRegistries":       []any{"registry.local:5000"},
				"scratchSpaceStorageClass": "scratch",
				"imagePullSecrets":         []any{"mirror"},
				"infra":                    map[string]any{"nodeSelector": nil},
			},
			want: map[string]any{
				"spec.config.importProxy": map[string]any{
					"HTTPProxy": "http://proxy:3128", "HTTPSProxy": "http://proxy:3128",
					"noProxy": ".svc,10.0.0.0/8", "trustedCAProxy": "proxy-ca",
				},
				"spec.config.insecureRegistries":       []any{"registry.local:5000"},
				"spec.config.scratchSpaceStorageClass": "scratch",
				"spec.config.imagePullSecrets":         []any{map[string]any{"name": "mirror"}},
				"spec.infra":                           map[string]any{},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cdi := mustRender(t, "cdi", tt.values)["CDI/cdi"]
			if cdi == nil {
				t.Fatal("no CDI resource rendered")
			}
			for path, want := range tt.want {
				if diff := cmp.Diff(want, field(t, cdi, path)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", path, diff)
				}
			}
		})
	}
}

func TestMultusDaemon(t *testing.T) {
	objects := mustRender(t, "multus", nil)
	ds := objects["DaemonSet/kube-multus-ds"]
	if ds == nil {
		t.Fatal("no multus DaemonSet rendered")
	}
	limit := field(t, ds, "spec.template.spec.containers.0.resources.limits.memory")
	if limit != "512Mi" {
		t.Errorf("memory limit %v, want 512Mi (the upstream 50Mi OOM-kills the daemon)", limit)
	}
	if cpu := field(t, ds, "spec.template.spec.containers.0.resources.limits.cpu"); cpu != nil {
		t.Errorf("CPU limit %v throttles CNI calls", cpu)
	}
	cm := objects["ConfigMap/multus-daemon-config"]
	raw, _, _ := unstructured.NestedString(cm.Object, "data", "daemon-config.json")
	var config map[string]any
	if err := yaml.Unmarshal([]byte(raw), &config); err != nil {
		t.Fatalf("daemon config is not JSON: %v", err)
	}
	if config["chrootDir"] != "/hostroot" || config["multusConfigFile"] != "auto" {
		t.Errorf("daemon config %v", config)
	}
	for _, kind := range []string{"CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "ServiceAccount"} {
		found := false
		for key := range objects {
			found = found || strings.HasPrefix(key, kind+"/")
		}
		if kind == "CustomResourceDefinition" && found {
			t.Errorf("the NetworkAttachmentDefinition CRD belongs in crds/, not templates/")
		}
		if kind != "CustomResourceDefinition" && !found {
			t.Errorf("no %s rendered", kind)
		}
	}
}

func TestCNIPluginsInstallsTheConfiguredPlugins(t *testing.T) {
	ds := mustRender(t, "cni-plugins", map[string]any{"plugins": []any{"bridge", "macvlan"}})["DaemonSet/cni-plugins"]
	if ds == nil {
		t.Fatal("no DaemonSet rendered")
	}
	env := field(t, ds, "spec.template.spec.initContainers.0.env.0")
	if diff := cmp.Diff(map[string]any{"name": "PLUGINS", "value": "bridge macvlan"}, env); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if path := field(t, ds, "spec.template.spec.volumes.0.hostPath.path"); path != "/opt/cni/bin" {
		t.Errorf("host path %v", path)
	}
}
