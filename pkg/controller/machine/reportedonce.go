package machine

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// maxReported bounds a reportedOnce memo; when it is reached the memo
// starts afresh, so at worst a fact is reported twice.
const maxReported = 4096

// reportedOnce remembers the facts the controller reported, so that each
// gets one event (and one count). It lives in memory: after a restart a
// fact still true may be reported once more.
type reportedOnce[K comparable] struct {
	mu   sync.Mutex
	seen map[K]struct{}
}

// first reports whether key was not reported before, and remembers it.
func (m *reportedOnce[K]) first(key K) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.seen[key]; ok {
		return false
	}
	if m.seen == nil || len(m.seen) >= maxReported {
		m.seen = map[K]struct{}{}
	}
	m.seen[key] = struct{}{}
	return true
}

// migrationKey names one live migration of a VMI away from an infra node,
// whether the controller or KubeVirt started it.
type migrationKey struct {
	vmi  types.UID
	node string
}

// waitKey names one reason an instance of a Machine gave for not running
// yet (see reportWaiting).
type waitKey struct {
	machine         types.UID
	reason, message string
}
