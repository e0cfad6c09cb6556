package helm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
)

// loadCharts returns the chart of every component by name.
func loadCharts(t *testing.T) map[string]*chart.Chart {
	t.Helper()
	releases, err := components.Load(components.Default())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*chart.Chart{}
	for _, r := range releases {
		out[r.Name] = r.Chart
	}
	return out
}

// TestChartSchemasKnowEveryKey: every object of every chart's
// values.schema.json, at every level, refuses keys it does not list
// (additionalProperties false), is a map whose values have a schema, or
// names the Kubernetes type or CRD field it is passed into (TypeKeyword,
// which must resolve). Without this a new open object would let typos
// through again.
func TestChartSchemasKnowEveryKey(t *testing.T) {
	for name, ch := range loadCharts(t) {
		t.Run(name, func(t *testing.T) {
			var root map[string]any
			if err := json.Unmarshal(ch.Schema, &root); err != nil {
				t.Fatal(err)
			}
			doc := &schemaDoc{root: root, chart: ch}
			for _, problem := range openNodes(doc, root, "", false) {
				t.Error(problem)
			}
		})
	}
}

// openNodes returns a line for every object node under node that accepts
// unknown keys, and for every reference or type that does not resolve. A
// refinement (then, else) adds constraints to the object it belongs to and
// is no object of its own.
func openNodes(doc *schemaDoc, node map[string]any, at string, refinement bool) []string {
	if ref, ok := node["$ref"].(string); ok {
		if _, err := doc.resolve(ref); err != nil {
			return []string{at + ": " + err.Error()}
		}
		return nil // the definitions are checked on their own
	}
	if name, ok := node[TypeKeyword].(string); ok {
		if _, err := typeShape(doc.chart, name); err != nil {
			return []string{at + ": " + err.Error()}
		}
		return nil
	}
	var out []string
	_, props := node["properties"]
	_, extra := node["additionalProperties"]
	if (node["type"] == "object" || props) && !extra && !refinement {
		out = append(out, at+": an object without additionalProperties or "+TypeKeyword)
	}
	if node["type"] == "array" && node["items"] == nil {
		out = append(out, at+": an array without items")
	}
	for _, key := range []string{"properties", "definitions"} {
		children, _ := node[key].(map[string]any)
		for name, child := range children {
			if m, ok := child.(map[string]any); ok {
				out = append(out, openNodes(doc, m, at+"/"+key+"/"+name, false)...)
			}
		}
	}
	for _, key := range []string{"additionalProperties", "items", "then", "else"} {
		if m, ok := node[key].(map[string]any); ok {
			out = append(out, openNodes(doc, m, at+"/"+key, key == "then" || key == "else")...)
		}
	}
	all, _ := node["allOf"].([]any)
	for i, sub := range all {
		if m, ok := sub.(map[string]any); ok {
			out = append(out, openNodes(doc, m, fmt.Sprintf("%s/allOf/%d", at, i), true)...)
		}
	}
	return out
}

// TestChartDefaultsAndPinnedImagesValidate: what the charts and the
// installer set themselves, the defaults of values.yaml and the pinned
// images, passes the check of unknown keys and the schema.
func TestChartDefaultsAndPinnedImagesValidate(t *testing.T) {
	releases, err := components.Load(components.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range releases {
		values, err := r.Values(nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, lines, err := unknownValues(r.Chart, r.Chart.Values); err != nil || len(lines) > 0 {
			t.Errorf("%s: the chart's own defaults have unknown keys: %v %v", r.Name, lines, err)
		}
		if err := ValidateValues(r.Chart, values); err != nil {
			t.Errorf("%s: %v", r.Name, err)
		}
	}
}

// TestUnknownValuesNamed: a key the chart does not know, at any level and
// inside values passed into Kubernetes objects, is refused with its --set
// path and the closest known key, or the known keys when none is close.
func TestUnknownValuesNamed(t *testing.T) {
	charts := loadCharts(t)
	tests := []struct {
		chart  string
		values map[string]any
		want   string
	}{
		{"kubevirt", map[string]any{"monitorNamespce": "monitoring"}, "- unknown value monitorNamespce: did you mean monitorNamespace?"},
		{"kubevirt", map[string]any{"operator": map[string]any{"replica": 2}}, "- unknown value operator.replica: did you mean replicas?"},
		{"kubevirt", map[string]any{"operator": map[string]any{"resources": map[string]any{"limts": map[string]any{"cpu": "1"}}}},
			"- unknown value operator.resources.limts: did you mean limits?"},
		{"kubevirt", map[string]any{"workloads": map[string]any{"nodePlacement": map[string]any{"tolerations": []any{map[string]any{"key": "k", "efect": "NoSchedule"}}}}},
			"- unknown value workloads.nodePlacement.tolerations[0].efect: did you mean effect?"},
		{"kubevirt", map[string]any{"configuration": map[string]any{"developerConfiguraton": map[string]any{}}},
			"- unknown value configuration.developerConfiguraton: did you mean developerConfiguration?"},
		{"kubevirt", map[string]any{"configuration": map[string]any{"migrations": map[string]any{"bandwidthPerMigraton": "1Gi"}}},
			"- unknown value configuration.migrations.bandwidthPerMigraton: did you mean bandwidthPerMigration?"},
		{"kubevirt", map[string]any{"permittedHostDevices": map[string]any{"pciHostDevices": []any{map[string]any{"resourceName": "r", "pciVendorSelecter": "10DE:1EB8"}}}},
			"- unknown value permittedHostDevices.pciHostDevices[0].pciVendorSelecter: did you mean pciVendorSelector?"},
		{"multus", map[string]any{"typo": 1}, "- unknown value typo: the values here are cniVersion, hostCNIBinDir, hostCNIConfDir, imagePullPolicy, imagePullSecrets, images, installerResources, logLevel, nodeSelector, priorityClassName, resources, tolerations"},
		{"cni-plugins", map[string]any{"tolerations": []any{map[string]any{"operater": "Exists"}}}, "- unknown value tolerations[0].operater: did you mean operator?"},
		{"cdi", map[string]any{"config": map[string]any{"featureGate": []any{"HonorWaitForFirstConsumer"}}}, "- unknown value config.featureGate: did you mean featureGates?"},
		{"cdi", map[string]any{"infra": map[string]any{"affinity": map[string]any{"nodeAffinity": map[string]any{"required": map[string]any{}}}}},
			"- unknown value infra.affinity.nodeAffinity.required: the values here are preferredDuringSchedulingIgnoredDuringExecution, requiredDuringSchedulingIgnoredDuringExecution"},
		{"infra-controller", map[string]any{"tenantVLAN": map[string]any{"rnage": "100-199"}}, "- unknown value tenantVLAN.rnage: did you mean range?"},
		{"machine-controller", map[string]any{"webhook": map[string]any{"namespaceSelector": map[string]any{"matchLabel": map[string]any{"a": "b"}}}},
			"- unknown value webhook.namespaceSelector.matchLabel: did you mean matchLabels?"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %v", tt.chart, tt.values), func(t *testing.T) {
			err := ValidateValues(charts[tt.chart], tt.values)
			if err == nil || !strings.Contains(err.Error(), "the values do not match the chart's values.schema.json:\n") ||
				!slices.Contains(strings.Split(err.Error(), "\n"), tt.want) {
				t.Errorf("error %v, want the line %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "additional properties") {
				t.Errorf("the unknown key is also reported by Helm's check:\n%v", err)
			}
		})
	}
}

// TestUnknownValuesBesideOtherViolations: unknown keys and the schema's
// other violations of one chart come in one error, each once.
func TestUnknownValuesBesideOtherViolations(t *testing.T) {
	err := ValidateValues(loadCharts(t)["kubevirt"], map[string]any{"monitorNamespce": "m", "uninstallStrategy": "Foo"})
	want := "the values do not match the chart's values.schema.json:\n" +
		"- at '/uninstallStrategy': value must be one of 'RemoveWorkloads', 'BlockUninstallIfWorkloadsExist'\n" +
		"- unknown value monitorNamespce: did you mean monitorNamespace?"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}
