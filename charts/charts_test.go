package charts_test

import (
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/releaseutil"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubevirt-kkp/kkp-kubevirt/charts"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
)

// kubeVersion is the Kubernetes version the charts are linted and rendered
// for.
const kubeVersion = "v" + components.MaxTestedKubernetes + ".0"

// namespaces are the release namespaces of the charts.
var namespaces = map[string]string{
	"cni-plugins":        "kube-system",
	"multus":             "kube-system",
	"kubevirt":           "kubevirt",
	"cdi":                "cdi",
	"machine-controller": "kubevirt-kkp-machines",
	"infra-controller":   "kubevirt-kkp-infra",
}

func TestLint(t *testing.T) {
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	for name, ns := range namespaces {
		t.Run(name, func(t *testing.T) {
			linter := lint.AllWithKubeVersion(name, nil, ns, kv)
			for _, msg := range linter.Messages {
				if msg.Severity >= support.WarningSev {
					t.Errorf("lint: %s", msg)
				}
			}
		})
	}
}

func TestLintRejectsBadValues(t *testing.T) {
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		chart  string
		values map[string]any
	}{
		{"kubevirt", map[string]any{"uninstallStrategy": "Never"}},
		{"kubevirt", map[string]any{"imagePullPolicy": "Sometimes"}},
		{"cdi", map[string]any{"importProxy": map[string]any{"httpsProxy": 3}}},
		{"multus", map[string]any{"logLevel": "chatty"}},
		{"cni-plugins", map[string]any{"plugins": []any{}}},
		{"machine-controller", map[string]any{"drainTimeout": "ten minutes"}},
		{"machine-controller", map[string]any{"rbac": map[string]any{"infra": map[string]any{"enabled": true}}}},
		{"machine-controller", map[string]any{"rbac": map[string]any{"infra": map[string]any{"subject": map[string]any{"kind": "Robot", "name": "x"}}}}},
		{"infra-controller", map[string]any{"namespacePrefix": ""}},
		{"infra-controller", map[string]any{"storageClassBus": "ide"}},
		{"infra-controller", map[string]any{"tenantCleanupTimeout": "ten minutes"}},
		{"infra-controller", map[string]any{"networkPolicyAllowedCIDRs": "10.0.0.0/8"}},
		{"infra-controller", map[string]any{"tenantNetworks": "yes"}},
		{"machine-controller", map[string]any{"maxRetryDelay": "2 minutes"}},
		{"machine-controller", map[string]any{"instanceStoppedGrace": "five minutes"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %v", tt.chart, tt.values), func(t *testing.T) {
			linter := lint.AllWithKubeVersion(tt.chart, tt.values, namespaces[tt.chart], kv)
			if linter.HighestSeverity < support.ErrorSev {
				t.Errorf("lint accepted %v; messages: %v", tt.values, linter.Messages)
			}
		})
	}
}

func TestEmbeddedChartsMatchTheDirectories(t *testing.T) {
	for name := range namespaces {
		t.Run(name, func(t *testing.T) {
			onDisk, err := loader.LoadDir(name)
			if err != nil {
				t.Fatal(err)
			}
			embedded, err := components.LoadChart(charts.FS, name)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(fileNames(onDisk.Templates), fileNames(embedded.Templates)); diff != "" {
				t.Errorf("templates differ (-disk +embedded):\n%s", diff)
			}
			if diff := cmp.Diff(onDisk.Metadata, embedded.Metadata); diff != "" {
				t.Errorf("metadata differs (-disk +embedded):\n%s", diff)
			}
		})
	}
	entries, err := fs.ReadDir(charts.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(namespaces) {
		t.Errorf("the charts package embeds %d directories, the test knows %d", len(entries), len(namespaces))
	}
}

// render renders a chart directory with the SDK's loader and engine and
// returns its objects by "Kind/name".
func render(t *testing.T, name string, values map[string]any) (map[string]*unstructured.Unstructured, error) {
	t.Helper()
	ch, err := loader.LoadDir(name)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = *kv
	opts := chartutil.ReleaseOptions{Name: name, Namespace: namespaces[name], IsInstall: true, Revision: 1}
	vals, err := chartutil.ToRenderValues(ch, values, opts, caps)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		return nil, err
	}
	objects := map[string]*unstructured.Unstructured{}
	for path, content := range files {
		if !strings.HasSuffix(path, ".yaml") {
			continue
		}
		for _, doc := range releaseutil.SplitManifests(content) {
			obj := &unstructured.Unstructured{}
			if err := yaml.UnmarshalStrict([]byte(doc), &obj.Object); err != nil {
				t.Fatalf("%s does not parse: %v\n%s", path, err, doc)
			}
			if len(obj.Object) == 0 {
				continue
			}
			objects[obj.GetKind()+"/"+obj.GetName()] = obj
		}
	}
	return objects, nil
}

func fileNames(files []*chart.File) []string {
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, f.Name)
	}
	sort.Strings(names)
	return names
}
