package tenantconn

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestStaticMapper(t *testing.T) {
	sc := schema.GroupVersionKind{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass"}
	ds := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}
	crb := schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"}
	m, err := StaticMapper(Kind{GVK: sc}, Kind{GVK: ds, Namespaced: true}, Kind{GVK: crb})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		gvk          schema.GroupVersionKind
		wantResource string
		wantScope    meta.RESTScopeName
	}{
		{gvk: sc, wantResource: "storageclasses", wantScope: meta.RESTScopeNameRoot},
		{gvk: ds, wantResource: "daemonsets", wantScope: meta.RESTScopeNameNamespace},
		{gvk: crb, wantResource: "clusterrolebindings", wantScope: meta.RESTScopeNameRoot},
	} {
		t.Run(tc.gvk.Kind, func(t *testing.T) {
			mapping, err := m.RESTMapping(tc.gvk.GroupKind(), tc.gvk.Version)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{mapping.Resource.Resource, string(mapping.Scope.Name())}
			if diff := cmp.Diff([]string{tc.wantResource, string(tc.wantScope)}, got); diff != "" {
				t.Errorf("mapping (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("other kinds are no match", func(t *testing.T) {
		_, err := m.RESTMapping(schema.GroupKind{Kind: "Pod"}, "v1")
		if !meta.IsNoMatchError(err) {
			t.Errorf("RESTMapping(Pod) error = %v, want a no-match error", err)
		}
	})
	t.Run("an incomplete kind is refused", func(t *testing.T) {
		if _, err := StaticMapper(Kind{GVK: schema.GroupVersionKind{Kind: "X"}}); err == nil {
			t.Error("StaticMapper accepted a kind without version")
		}
	})
}
