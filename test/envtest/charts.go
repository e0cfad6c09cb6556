package envtest

import (
	"fmt"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/helm"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/readiness"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// chartKubernetesVersion is the Kubernetes version charts are rendered for:
// that of the test control plane.
const chartKubernetesVersion = "v1.36.3"

// kubeVirtVersion is the KubeVirt version whose code the tests run.
const kubeVirtVersion = "v1.9.0"

// release returns kubevirt-installer's release of a component.
func release(component string) (components.Release, error) {
	releases, err := components.Load(components.Default())
	if err != nil {
		return components.Release{}, err
	}
	r, ok := components.Find(releases, component)
	if !ok {
		return components.Release{}, fmt.Errorf("kubevirt-installer has no component %s", component)
	}
	return r, nil
}

// ChartObject returns the one object of the given kind that
// kubevirt-installer installs for component with its default values, as it
// renders it (e.g. the KubeVirt CR of "kubevirt", the CDI CR of "cdi").
func ChartObject(component, kind string) (*unstructured.Unstructured, error) {
	r, err := release(component)
	if err != nil {
		return nil, err
	}
	values, err := r.Values(nil)
	if err != nil {
		return nil, err
	}
	manifest, err := helm.Render(r.Chart, r.Name, r.Namespace, values, chartKubernetesVersion)
	if err != nil {
		return nil, err
	}
	var found *unstructured.Unstructured
	for _, doc := range readiness.Documents(manifest) {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			return nil, fmt.Errorf("failed to parse the %s chart's output: %w", component, err)
		}
		if obj.GetKind() != kind {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("the %s chart renders more than one %s", component, kind)
		}
		found = obj
	}
	if found == nil {
		return nil, fmt.Errorf("the %s chart renders no %s", component, kind)
	}
	return found, nil
}

// chartImages returns the pinned images of component by their values key.
func chartImages(component string) (map[string]string, error) {
	r, err := release(component)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, v := range r.Images.Values() {
		out[k] = fmt.Sprint(v)
	}
	return out, nil
}
