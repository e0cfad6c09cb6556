package restmapper

import (
	"fmt"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"
)

// New returns controller-runtime's dynamic REST mapper of a cluster,
// remembering the mappings it found (see memoMapper). It asks the cluster
// nothing until a kind is mapped.
func New(cfg *rest.Config, httpClient *http.Client) (meta.RESTMapper, error) {
	dynamic, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("failed to create the REST mapper of %s: %w", kubeconfig.Server(cfg.Host), err)
	}
	return newMemoMapper(dynamic), nil
}

// memoMapper remembers the mappings its RESTMapper found for a kind and
// one version. Every cached read asks for its kind's scope (to route it,
// and controller-runtime's namespaced cache to key it), and
// controller-runtime's dynamic mapper answers each question by walking a
// mapper per group version, building an error for every one that does not
// have the kind: at 1000 Machines, gigabytes of garbage for the infra
// cluster's mapper, and a tenth of that for the user cluster's. The dynamic mapper
// never forgets a mapping it found either, so remembering found ones
// changes no answer; failures are not remembered, so a kind served later
// is still found.
type memoMapper struct {
	meta.RESTMapper

	mu    sync.RWMutex
	found map[schema.GroupVersionKind]meta.RESTMapping
}

func newMemoMapper(m meta.RESTMapper) *memoMapper {
	return &memoMapper{RESTMapper: m, found: map[schema.GroupVersionKind]meta.RESTMapping{}}
}

// RESTMapping implements meta.RESTMapper.
func (m *memoMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) != 1 {
		return m.RESTMapper.RESTMapping(gk, versions...)
	}
	gvk := gk.WithVersion(versions[0])
	m.mu.RLock()
	mapping, ok := m.found[gvk]
	m.mu.RUnlock()
	if ok {
		return &mapping, nil
	}
	found, err := m.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.found[gvk] = *found
	m.mu.Unlock()
	return found, nil
}
