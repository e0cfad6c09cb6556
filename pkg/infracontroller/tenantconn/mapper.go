package tenantconn

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kind is a kind the infra-controller reads or writes in tenant clusters,
// with its scope.
type Kind struct {
	// GVK is the group, version and kind.
	GVK schema.GroupVersionKind
	// Namespaced tells whether its objects live in namespaces.
	Namespaced bool
}

// StaticMapper returns a REST mapper of exactly kinds, with the plural
// resource names Kubernetes uses for them. Tenant clients and watches use
// it instead of discovering each tenant cluster's API: the kinds are
// built-in ones, known in advance, so discovery would cost every tenant
// requests and a copy of its API groups in memory for nothing. A kind
// outside the list is a NoKindMatch error.
func StaticMapper(kinds ...Kind) (meta.RESTMapper, error) {
	var versions []schema.GroupVersion
	seen := map[schema.GroupVersion]bool{}
	for _, k := range kinds {
		if k.GVK.Kind == "" || k.GVK.Version == "" {
			return nil, fmt.Errorf("incomplete kind %s", k.GVK)
		}
		if gv := k.GVK.GroupVersion(); !seen[gv] {
			seen[gv] = true
			versions = append(versions, gv)
		}
	}
	m := meta.NewDefaultRESTMapper(versions)
	for _, k := range kinds {
		scope := meta.RESTScopeRoot
		if k.Namespaced {
			scope = meta.RESTScopeNamespace
		}
		m.Add(k.GVK, scope)
	}
	return m, nil
}
