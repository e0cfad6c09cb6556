package installer

import (
	"bytes"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
)

// Template writes every manifest of the installation for GitOps: the
// namespaces the installer creates, then each release's CRDs and objects in
// dependency order, rendered as the installer would install them. Everything
// is rendered before the first byte is written: on error, nothing is written
// and the error names the problems of every release.
func Template(w io.Writer, releases []components.Release, values map[string]map[string]any, kubeVersion string) error {
	manifests, err := renderAll(releases, values, kubeVersion)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# Rendered by kubevirt-installer for Kubernetes %s: %v\n", kubeVersion, releaseNames(releases))
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
		fmt.Fprintf(&buf, "---\n# Source: kubevirt-installer namespace of %s\n%s", r.Name, doc)
	}
	for _, manifest := range manifests {
		buf.WriteString(manifest)
	}
	if _, err := buf.WriteTo(w); err != nil {
		return fmt.Errorf("failed to write the manifests: %w", err)
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
