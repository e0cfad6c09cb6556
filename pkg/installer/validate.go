package installer

import (
	"errors"
	"fmt"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/helm"
)

// validationKubeVersion is the Kubernetes version Validate renders for; the
// charts do not depend on the version beyond their minimum.
const validationKubeVersion = "v" + components.MaxTestedKubernetes + ".0"

// Validate checks the values of every release as installing it would,
// without a cluster: the pinned images are not overridden, the values match
// the chart's values.schema.json, which knows every key (helm.ValidateValues),
// the chart renders with them (its templates refuse some combinations, e.g.
// a feature gate both enabled and disabled), and every container that runs
// one of this project's binaries gets arguments its binary accepts, as its
// own parser checks them (binaries). Every problem of every release is
// reported at once, each prefixed with the component's name.
func Validate(releases []components.Release, values map[string]map[string]any) error {
	_, err := renderAll(releases, values, validationKubeVersion)
	return err
}

// renderAll renders every release with its user values, in order. The
// errors of all releases are joined; the manifests are only complete when
// there is none.
func renderAll(releases []components.Release, values map[string]map[string]any, kubeVersion string) ([]string, error) {
	if err := helm.CheckKubeVersion(kubeVersion); err != nil {
		return nil, err
	}
	manifests := make([]string, 0, len(releases))
	var errs []error
	for _, r := range releases {
		manifest, err := render(r, values[r.Name], kubeVersion)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		manifests = append(manifests, manifest)
	}
	return manifests, errors.Join(errs...)
}

// render renders one release; its errors name the component.
func render(r components.Release, user map[string]any, kubeVersion string) (string, error) {
	values, err := r.Values(user)
	if err != nil {
		return "", err
	}
	if err := helm.ValidateValues(r.Chart, values); err != nil {
		return "", fmt.Errorf("%s: %w", r.Name, err)
	}
	manifest, err := helm.Render(r.Chart, r.Name, r.Namespace, values, kubeVersion)
	if err != nil {
		return "", fmt.Errorf("%s: %w", r.Name, err)
	}
	if _, err := checkArgs(r, manifest, binaries); err != nil {
		return "", fmt.Errorf("%s: %w", r.Name, err)
	}
	return manifest, nil
}
