package installer

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// refusedValue is a value of one chart the installer refuses, and a line
// of the refusal.
type refusedValue struct {
	component string
	values    map[string]any
	want      string
}

// refusedValues are values every chart refuses: unknown keys at any level
// (with the closest known key), feature gates past their values, and
// values the infra-controller binary refuses although its chart renders
// them.
var refusedValues = []refusedValue{
	{"cni-plugins", map[string]any{"tolerations": []any{map[string]any{"operater": "Exists"}}}, "- unknown value tolerations[0].operater: did you mean operator?"},
	{"multus", map[string]any{"typo": 1}, "- unknown value typo: the values here are cniVersion, "},
	{"kubevirt", map[string]any{"monitorNamespce": "monitoring"}, "- unknown value monitorNamespce: did you mean monitorNamespace?"},
	{"kubevirt", map[string]any{"configuration": map[string]any{"developerConfiguraton": map[string]any{"cpuAllocationRatio": 4}}},
		"- unknown value configuration.developerConfiguraton: did you mean developerConfiguration?"},
	{"kubevirt", map[string]any{"configuration": map[string]any{"developerConfiguration": map[string]any{"featureGates": []any{"NoSuchGate"}}}},
		"configuration.developerConfiguration.featureGates cannot be set: enable feature gates with the values featureGates"},
	{"kubevirt", map[string]any{"configuration": map[string]any{"developerConfiguration": map[string]any{"disabledFeatureGates": []any{"LiveMigration"}}}},
		"configuration.developerConfiguration.disabledFeatureGates cannot be set: disable feature gates with the value disabledFeatureGates"},
	{"cdi", map[string]any{"config": map[string]any{"featureGate": []any{"HonorWaitForFirstConsumer"}}}, "- unknown value config.featureGate: did you mean featureGates?"},
	{"infra-controller", map[string]any{"tenantVLAN": map[string]any{"template": "bridge", "range": "0-5000", "bridge": "br0"}},
		`Deployment kubevirt-kkp-infra/infra-controller would not start: its container infra-controller refuses the arguments rendered from the values: invalid value "0-5000" for flag -tenant-vlan-range: VLAN range 0-5000: ids must be between 1 and 4094`},
	{"infra-controller", map[string]any{"tenantVLAN": map[string]any{"template": "ovs", "range": "5-3", "bridge": "br-ex"}},
		`invalid value "5-3" for flag -tenant-vlan-range: VLAN range 5-3: ids must be between 1 and 4094, the first not above the last`},
	{"infra-controller", map[string]any{"networkPolicyAllowedCIDRs": []any{"10.0.0.0/33", "not-a-cidr"}},
		`for flag -network-policy-allowed-cidrs: "10.0.0.0/33" is not a CIDR (an address and a prefix length, e.g. 10.0.0.0/8 or fd00::/8); "not-a-cidr" is not a CIDR`},
	{"infra-controller", map[string]any{"storageClassResync": "1ns"}, "--storage-class-resync 1ns: must be 0 (off) or at least 1s"},
	{"infra-controller", map[string]any{"tenantCleanupTimeout": "0"}, "--tenant-cleanup-timeout 0s: must be above 0"},
	{"infra-controller", map[string]any{"flavorWorkers": 5000}, "--flavor-workers 5000: must be between 1 and 1000"},
	{"infra-controller", map[string]any{"tenantVLAN": map[string]any{"rnage": "100-199"}}, "- unknown value tenantVLAN.rnage: did you mean range?"},
	{"machine-controller", map[string]any{"webhook": map[string]any{"namespaceSelector": map[string]any{"matchLabel": map[string]any{"a": "b"}}}},
		"- unknown value webhook.namespaceSelector.matchLabel: did you mean matchLabels?"},
}

// TestRefusedValuesWriteNothing: every refused value of every chart is
// refused by Validate, naming its component, and Install with it sends
// not one request to the API server.
func TestRefusedValuesWriteNothing(t *testing.T) {
	env := requireEnv(t)
	releases := defaultReleases(t)
	covered := map[string]bool{}
	for _, rv := range refusedValues {
		covered[rv.component] = true
		t.Run(fmt.Sprintf("%s %v", rv.component, rv.values), func(t *testing.T) {
			values := map[string]map[string]any{rv.component: rv.values}
			err := Validate(releases, values)
			if err == nil || !strings.Contains(err.Error(), rv.component+": ") || !strings.Contains(err.Error(), rv.want) {
				t.Fatalf("Validate: error %v, want one naming %s and containing %q", err, rv.component, rv.want)
			}
			counter := envtest.NewRequestCounter()
			cfg := rest.CopyConfig(env.Config)
			cfg.Wrap(counter.Wrap)
			poller := testPoller
			poller.Timeout = 2 * time.Second
			inst, err := New(cfg, releases, &syncBuffer{}, nil, poller)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := inst.Install(t.Context(), Options{Values: values}); err == nil || !strings.Contains(err.Error(), rv.want) {
				t.Errorf("Install: error %v, want one containing %q", err, rv.want)
			}
			if n := counter.Total(); n != 0 {
				t.Errorf("%d API requests (%d writes) before the values were refused: %v", n, counter.Total("POST", "PUT", "PATCH", "DELETE"), counter.Counts())
			}
		})
	}
	for _, name := range components.Names(components.Default()) {
		if !covered[name] {
			t.Errorf("no refused value of chart %s", name)
		}
	}
}

// TestBinariesFindTheirContainers: every container whose arguments are
// checked is rendered by its chart with the defaults, whose arguments its
// binary accepts, so a renamed container cannot drop out of the check.
func TestBinariesFindTheirContainers(t *testing.T) {
	releases := defaultReleases(t)
	for c := range binaries {
		var r components.Release
		for _, rel := range releases {
			if rel.Component.Chart == c.Chart {
				r = rel
			}
		}
		manifest, err := render(r, nil, validationKubeVersion)
		if err != nil {
			t.Fatalf("%s: %v", c.Chart, err)
		}
		n, err := checkArgs(r, manifest, map[Container]ArgsCheck{c: binaries[c]})
		if err != nil || n == 0 {
			t.Errorf("%s container %s: %d checked, error %v", c.Chart, c.Name, n, err)
		}
	}
}
