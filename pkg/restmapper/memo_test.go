package restmapper

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// countingMapper counts the RESTMapping calls that reach it.
type countingMapper struct {
	meta.RESTMapper
	calls int
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.calls++
	return c.RESTMapper.RESTMapping(gk, versions...)
}

// TestMemoMapper: a mapping found once is answered without asking again;
// a kind not found is asked again each time, so it is found once served.
func TestMemoMapper(t *testing.T) {
	vm := schema.GroupVersionKind{Group: "kubevirt.io", Version: "v1", Kind: "VirtualMachine"}
	pvc := schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolumeClaim"}
	dm := meta.NewDefaultRESTMapper(nil)
	dm.Add(vm, meta.RESTScopeNamespace)
	inner := &countingMapper{RESTMapper: dm}
	m := newMemoMapper(inner)
	for range 3 {
		mapping, err := m.RESTMapping(vm.GroupKind(), vm.Version)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(meta.RESTScopeNameNamespace, mapping.Scope.Name()); diff != "" {
			t.Errorf("scope (-want +got):\n%s", diff)
		}
	}
	if inner.calls != 1 {
		t.Errorf("%d lookups of a found kind reached the mapper, want 1", inner.calls)
	}
	inner.calls = 0
	for range 2 {
		if _, err := m.RESTMapping(pvc.GroupKind(), pvc.Version); !meta.IsNoMatchError(err) {
			t.Fatalf("RESTMapping of a kind not served = %v, want no match", err)
		}
	}
	dm.Add(pvc, meta.RESTScopeNamespace)
	if _, err := m.RESTMapping(pvc.GroupKind(), pvc.Version); err != nil {
		t.Fatalf("RESTMapping of a kind served later: %v", err)
	}
	if inner.calls != 3 {
		t.Errorf("%d lookups of a kind not found reached the mapper, want 3", inner.calls)
	}
}
