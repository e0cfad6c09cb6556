// Package chartrender renders a chart of the repository (charts.FS) in a
// test, as the installer would install it, so that a test can check what
// the chart hands to the binary it runs.
package chartrender

import (
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"

	"github.com/kubevirt-kkp/kkp-kubevirt/charts"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Namespace is the release namespace of every rendering.
const Namespace = "kubevirt-kkp"

// Files renders the chart in directory chart of charts.FS with values, as
// release chart installed to Namespace, and returns the rendered files by
// path ("<chart>/templates/<file>"). A chart that does not load or render
// fails t.
func Files(t testing.TB, chart string, values map[string]any) map[string]string {
	t.Helper()
	ch, err := components.LoadChart(charts.FS, chart)
	if err != nil {
		t.Fatalf("failed to load chart %s: %v", chart, err)
	}
	opts := chartutil.ReleaseOptions{Name: chart, Namespace: Namespace, IsInstall: true}
	vals, err := chartutil.ToRenderValues(ch, values, opts, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatalf("failed to build the render values of chart %s: %v", chart, err)
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		t.Fatalf("failed to render chart %s: %v", chart, err)
	}
	return files
}

// Objects renders the chart like Files and returns the YAML document of
// each object of its manifests by "Kind/name". A manifest that is not YAML
// fails t.
func Objects(t testing.TB, chart string, values map[string]any) map[string]string {
	t.Helper()
	objects := map[string]string{}
	for path, content := range Files(t, chart, values) {
		if !strings.HasSuffix(path, ".yaml") {
			continue
		}
		for _, doc := range releaseutil.SplitManifests(content) {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
				t.Fatalf("failed to parse a manifest of %s: %v", path, err)
			}
			if len(obj.Object) != 0 {
				objects[obj.GetKind()+"/"+obj.GetName()] = doc
			}
		}
	}
	return objects
}

// ContainerArgs renders the chart like Files and returns the arguments of
// the first container of its Deployment named deployment. A chart without
// that Deployment fails t.
func ContainerArgs(t testing.TB, chart string, values map[string]any, deployment string) []string {
	t.Helper()
	doc, ok := Objects(t, chart, values)["Deployment/"+deployment]
	if !ok {
		t.Fatalf("chart %s renders no Deployment %s", chart, deployment)
	}
	d := &appsv1.Deployment{}
	if err := yaml.Unmarshal([]byte(doc), d); err != nil {
		t.Fatalf("failed to parse Deployment %s: %v", deployment, err)
	}
	if len(d.Spec.Template.Spec.Containers) == 0 {
		t.Fatalf("Deployment %s of chart %s has no container", deployment, chart)
	}
	return d.Spec.Template.Spec.Containers[0].Args
}
