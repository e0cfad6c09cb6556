package readiness

import (
	"fmt"
	"sort"

	"helm.sh/helm/v3/pkg/releaseutil"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// Operator describes the custom resource a component's operator reconciles.
type Operator struct {
	// GVK is the resource's kind.
	GVK schema.GroupVersionKind
	// VersionField is the status field path of the rolled-out version.
	VersionField []string
	// Version is the version the resource must report.
	Version string
}

// header is the part of a manifest document the checks need.
type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// ForManifest returns the checks of a release manifest: a rollout check per
// Deployment and DaemonSet and, when op is not nil, a check of every custom
// resource of op's kind. Objects without a namespace get namespace, except
// the operator's resource when it is cluster-scoped (clusterScoped).
func ForManifest(manifest, namespace string, op *Operator, clusterScoped bool) ([]Check, error) {
	var checks []Check
	for _, doc := range Documents(manifest) {
		var h header
		if err := yaml.Unmarshal([]byte(doc), &h); err != nil {
			return nil, fmt.Errorf("failed to parse a manifest document: %w", err)
		}
		gv, err := schema.ParseGroupVersion(h.APIVersion)
		if err != nil {
			return nil, fmt.Errorf("failed to parse apiVersion %q: %w", h.APIVersion, err)
		}
		key := types.NamespacedName{Namespace: h.Metadata.Namespace, Name: h.Metadata.Name}
		if key.Namespace == "" {
			key.Namespace = namespace
		}
		gvk := gv.WithKind(h.Kind)
		switch {
		case gvk.Group == "apps" && h.Kind == "Deployment":
			checks = append(checks, DeploymentRollout{Key: key})
		case gvk.Group == "apps" && h.Kind == "DaemonSet":
			checks = append(checks, DaemonSetRollout{Key: key})
		case op != nil && gvk.GroupKind() == op.GVK.GroupKind():
			if clusterScoped {
				key.Namespace = ""
			}
			checks = append(checks, OperatorResource{GVK: op.GVK, Key: key, VersionField: op.VersionField, Version: op.Version})
		}
	}
	return checks, nil
}

// Documents splits a manifest into its YAML documents, in manifest order.
func Documents(manifest string) []string {
	docs := releaseutil.SplitManifests(manifest)
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, docs[k])
	}
	return out
}
