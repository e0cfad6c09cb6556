package machine

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// maxReportedMigrations bounds migrationReports; when it is reached the
// memo starts afresh, so at worst a migration is reported twice.
const maxReportedMigrations = 4096

// migrationReports remembers the live migrations the controller reported,
// by VMI UID and the infra node the VMI leaves, so that each migration
// gets one event and one count, whether the controller or KubeVirt
// started it. It lives in memory: after a restart a migration still under
// way may be reported once more.
type migrationReports struct {
	mu   sync.Mutex
	seen map[migrationKey]struct{}
}

// migrationKey names one migration of a VMI away from an infra node.
type migrationKey struct {
	vmi  types.UID
	node string
}

// first reports whether key was not reported before, and remembers it.
func (m *migrationReports) first(key migrationKey) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.seen[key]; ok {
		return false
	}
	if m.seen == nil || len(m.seen) >= maxReportedMigrations {
		m.seen = map[migrationKey]struct{}{}
	}
	m.seen[key] = struct{}{}
	return true
}
