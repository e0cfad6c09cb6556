package installer

import (
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/helm"
)

// Template writes every manifest of the installation for GitOps: the
// namespaces the installer creates, then each release's CRDs and objects in
// dependency order, rendered as the installer would install them.
func Template(w io.Writer, releases []components.Release, values map[string]map[string]any, kubeVersion string) error {
	fmt.Fprintf(w, "# Rendered by kubevirt-installer for Kubernetes %s: %v\n", kubeVersion, releaseNames(releases))
	for _, r := range releases {
		if !r.ManagedNamespace {
			continue
		}
		ns := NamespaceObject(r.Component)
		doc, err := yaml.Marshal(map[string]any{
			"apiVersion": "v1",
			"kind":       "Namespace",
			"metadata":   map[string]any{"name": ns.Name, "labels": ns.Labels},
		})
		if err != nil {
			return fmt.Errorf("failed to render namespace %s: %w", ns.Name, err)
		}
		fmt.Fprintf(w, "---\n# Source: kubevirt-installer namespace of %s\n%s", r.Name, doc)
	}
	for _, r := range releases {
		vals, err := r.Values(values[r.Name])
		if err != nil {
			return err
		}
		manifest, err := helm.Render(r.Chart, r.Name, r.Namespace, vals, kubeVersion)
		if err != nil {
			return fmt.Errorf("%s: %w", r.Name, err)
		}
		if _, err := io.WriteString(w, manifest); err != nil {
			return fmt.Errorf("failed to write the manifests of %s: %w", r.Name, err)
		}
	}
	return nil
}

func releaseNames(releases []components.Release) []string {
	names := make([]string, 0, len(releases))
	for _, r := range releases {
		names = append(names, r.Name)
	}
	return names
}
