package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// noCluster is a kubeconfig that does not exist: a command that got as far as
// loading it fails with "failed to load the kubeconfig" instead of the
// expected refusal.
var noCluster = []string{"--kubeconfig", "/nonexistent/kubeconfig"}

// TestRefusedBeforeAnyWork: bad flags and bad values are refused before the
// cluster is contacted and before template writes a byte, all at once, each
// naming the flag or the component, the path and what is allowed.
func TestRefusedBeforeAnyWork(t *testing.T) {
	twoBadComponents := []string{"--set", "kubevirt.uninstallStrategy=Foo", "--set", "cdi.uninstallStrategy=Bar"}
	bothNamed := []string{
		"kubevirt: the values do not match the chart's values.schema.json:\n- at '/uninstallStrategy': value must be one of 'RemoveWorkloads', 'BlockUninstallIfWorkloadsExist'",
		"cdi: the values do not match the chart's values.schema.json:\n- at '/uninstallStrategy': value must be one of 'RemoveWorkloads', 'BlockUninstallIfWorkloadsExist'",
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"template: bad values in two components", append([]string{"template"}, twoBadComponents...), bothNamed},
		{"install: bad values in two components", append([]string{"install"}, twoBadComponents...), bothNamed},
		{"preflight: bad values in two components", append([]string{"preflight"}, twoBadComponents...), bothNamed},
		{"install: pull policy", []string{"install", "--image-pull-policy", "Sometimes"},
			[]string{`--image-pull-policy: "Sometimes" is not one of Always, IfNotPresent, Never`}},
		{"template: pull policy", []string{"template", "--image-pull-policy", "Sometimes"},
			[]string{`--image-pull-policy: "Sometimes" is not one of Always, IfNotPresent, Never`}},
		{"install: uninstall strategy", []string{"install", "--uninstall-strategy", "Foo"},
			[]string{`--uninstall-strategy: "Foo" is not one of RemoveWorkloads, BlockUninstallIfWorkloadsExist`}},
		{"install: negative timeout", []string{"install", "--timeout", "-5s"}, []string{"--timeout -5s: must be positive"}},
		{"install: zero timeout", []string{"install", "--timeout", "0s"}, []string{"--timeout 0s: must be positive"}},
		{"upgrade: negative poll interval", []string{"upgrade", "--poll-interval", "-1s"}, []string{"--poll-interval -1s: must be positive"}},
		{"uninstall: negative timeout", []string{"uninstall", "--timeout", "-5s"}, []string{"--timeout -5s: must be positive"}},
		{"install: node selector", []string{"install", "--workload-node-selector", "bad key=x"}, []string{"--workload-node-selector: bad key=x: name part must consist of"}},
		{"install: pull secret", []string{"install", "--image-pull-secret", "Bad_Secret"}, []string{`--image-pull-secret: "Bad_Secret": a lowercase RFC 1123 subdomain`}},
		{"install: KVM node label", []string{"install", "--kvm-node-label", "kvm"}, []string{`kvmNodeLabels (--kvm-node-label): "kvm" is not key=value`}},
		{"template: Kubernetes version", []string{"template", "--kube-version", "latest"}, []string{`--kube-version: failed to parse Kubernetes version "latest"`}},
		{"install: a typo in a value", []string{"install", "--set", "kubevirt.monitorNamespce=monitoring"},
			[]string{"kubevirt: the values do not match the chart's values.schema.json:\n- unknown value monitorNamespce: did you mean monitorNamespace?"}},
		{"template: an unknown value", []string{"template", "--set", "multus.typo=1"},
			[]string{"multus: the values do not match the chart's values.schema.json:\n- unknown value typo: the values here are cniVersion, "}},
		{"install: a value the infra-controller refuses", []string{"install", "--set",
			"infra-controller.tenantVLAN.template=bridge,infra-controller.tenantVLAN.range=0-5000,infra-controller.tenantVLAN.bridge=br0"},
			[]string{`infra-controller: Deployment kubevirt-kkp-infra/infra-controller would not start: its container infra-controller refuses the arguments rendered from the values: invalid value "0-5000" for flag -tenant-vlan-range`}},
		{"install: every problem at once", []string{
			"install", "--timeout", "-5s", "--image-pull-policy", "Sometimes", "--skip", "kubevirt-csi",
			"--set", "cdi.uninstallStrategy=Bar", "--set", "multus.logLevel=loud",
		}, []string{
			"--timeout -5s: must be positive", `--image-pull-policy: "Sometimes" is not one of`, `skip: unknown component "kubevirt-csi"`,
			"cdi: the values do not match", "- at '/uninstallStrategy'", "multus: the values do not match", "- at '/logLevel'",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := execute(t, append(tt.args, noCluster...)...)
			if err == nil {
				t.Fatalf("accepted; output:\n%s", out)
			}
			if out != "" {
				t.Errorf("wrote %d bytes before refusing:\n%.300s", len(out), out)
			}
			for _, w := range append([]string{"the configuration is refused, nothing was done"}, tt.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestEveryNamedFlagValidates: the values the named flags set in every
// chart are values the charts know and accept.
func TestEveryNamedFlagValidates(t *testing.T) {
	out, err := execute(t, "template", "--use-emulation", "--image-pull-policy", "Always", "--image-pull-secret", "mirror",
		"--monitor-namespace", "monitoring", "--monitor-account", "prometheus-k8s", "--uninstall-strategy", "RemoveWorkloads",
		"--workload-node-selector", "kvm=true", "--infra-node-selector", "role=infra", "--scratch-space-storage-class", "fast",
		"--importer-http-proxy", "http://proxy:3128", "--importer-https-proxy", "http://proxy:3128", "--importer-no-proxy", ".svc",
		"--insecure-registry", "registry.local:5000", "--kvm-node-label", "kvm.example.com/kvm=true")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "kind: KubeVirt") {
		t.Errorf("template printed no KubeVirt resource:\n%.300s", out)
	}
}

// TestEnumFlagsMatchTheCharts: the values the enum flags allow are exactly
// those of every chart's values.schema.json that has the value.
func TestEnumFlagsMatchTheCharts(t *testing.T) {
	releases, err := components.Load(components.Default())
	if err != nil {
		t.Fatal(err)
	}
	for value, allowed := range map[string][]string{"imagePullPolicy": pullPolicies, "uninstallStrategy": uninstallStrategies} {
		seen := 0
		for _, r := range releases {
			var schema struct {
				Properties map[string]struct {
					Enum []string `json:"enum"`
				} `json:"properties"`
			}
			if err := json.Unmarshal(r.Chart.Schema, &schema); err != nil {
				t.Fatalf("%s: %v", r.Name, err)
			}
			p, ok := schema.Properties[value]
			if !ok {
				continue
			}
			seen++
			if diff := cmp.Diff(allowed, p.Enum); diff != "" {
				t.Errorf("%s %s (-flag +chart):\n%s", r.Name, value, diff)
			}
		}
		if seen == 0 {
			t.Errorf("no chart has %s", value)
		}
	}
}

// TestInstallWithBadValuesWritesNothing: install with bad kubevirt and cdi
// values sends not one request to the cluster (it installed the cni-plugins
// release before stopping at kubevirt).
func TestInstallWithBadValuesWritesNothing(t *testing.T) {
	requireEnv(t)
	counter := envtest.NewRequestCounter()
	var out, errOut bytes.Buffer
	cmd := newRoot(&globalOptions{out: &out, errOut: &errOut, wrapTransport: counter.Wrap})
	cmd.SetArgs([]string{
		"install", "--kubeconfig", testEnv.KubeconfigPath, "--skip-preflight", "--timeout", "2s",
		"--set", "kubevirt.uninstallStrategy=Foo", "--set", "cdi.uninstallStrategy=Bar",
	})
	err := cmd.ExecuteContext(t.Context())
	if err == nil || !strings.Contains(err.Error(), "kubevirt: the values") || !strings.Contains(err.Error(), "cdi: the values") {
		t.Errorf("error %v, want one naming kubevirt and cdi", err)
	}
	if n := counter.Total(); n != 0 {
		t.Errorf("%d API requests (%d writes) before the values were refused: %v", n, counter.Total("POST", "PUT", "PATCH", "DELETE"), counter.Counts())
	}
	if out.Len() != 0 {
		t.Errorf("output:\n%s", out.String())
	}
}
