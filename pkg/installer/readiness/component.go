package readiness

import (
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
)

// ForComponent returns the checks of a component installed with manifest:
// every workload rollout and, for an operator, its resource Available at the
// component's pinned version.
func ForComponent(c components.Component, manifest string) ([]Check, error) {
	if c.Resource == nil {
		return ForManifest(manifest, c.Namespace, nil, false)
	}
	op := &Operator{GVK: c.Resource.GroupVersionKind, VersionField: c.Resource.ObservedVersion, Version: c.Version}
	return ForManifest(manifest, c.Namespace, op, !c.Resource.Namespaced)
}
