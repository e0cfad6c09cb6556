package helm

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// Render renders a chart as its release would be installed, without a
// cluster: its CRDs first, then every template in Helm's install order. It
// validates the values against the chart's schema.
func Render(ch *chart.Chart, name, namespace string, values map[string]any, kubeVersion string) (string, error) {
	kv, err := chartutil.ParseKubeVersion(kubeVersion)
	if err != nil {
		return "", fmt.Errorf("failed to parse Kubernetes version %q: %w", kubeVersion, err)
	}
	cfg := &action.Configuration{
		Releases:     storage.Init(driver.NewMemory()),
		KubeClient:   &kubefake.PrintingKubeClient{Out: io.Discard},
		Capabilities: chartutil.DefaultCapabilities.Copy(),
		Log:          func(string, ...any) {},
	}
	install := action.NewInstall(cfg)
	install.DryRun = true
	install.ClientOnly = true
	install.Replace = true
	install.IncludeCRDs = true
	install.ReleaseName = name
	install.Namespace = namespace
	install.KubeVersion = kv
	rel, err := install.Run(ch, values)
	if err != nil {
		return "", fmt.Errorf("failed to render chart %s: %w", ch.Name(), err)
	}
	return rel.Manifest, nil
}

// Unchanged reports whether planned, a dry-run upgrade of current, would
// change nothing: same chart version, same values and the same manifest.
func Unchanged(current, planned *release.Release) (bool, error) {
	if current.Info == nil || current.Info.Status != release.StatusDeployed {
		return false, nil
	}
	if current.Chart.Metadata.Version != planned.Chart.Metadata.Version ||
		current.Chart.Metadata.AppVersion != planned.Chart.Metadata.AppVersion {
		return false, nil
	}
	if current.Manifest != planned.Manifest {
		return false, nil
	}
	a, err := normalize(current.Config)
	if err != nil {
		return false, err
	}
	b, err := normalize(planned.Config)
	if err != nil {
		return false, err
	}
	return reflect.DeepEqual(a, b), nil
}

// normalize round-trips values through JSON, the form Helm stores them in,
// so values read back from a release compare equal to fresh ones.
func normalize(values map[string]any) (any, error) {
	data, err := json.Marshal(values)
	if err != nil {
		return nil, fmt.Errorf("failed to encode values: %w", err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("failed to decode values: %w", err)
	}
	if out == nil {
		out = map[string]any{}
	}
	return out, nil
}
