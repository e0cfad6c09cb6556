package machineset

import (
	"sync"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// expectationTTL bounds how long a MachineSet waits for its cache to show
// its own creations and deletions; after it the MachineSet reconciles
// from what the cache shows.
const expectationTTL = time.Minute

// expectations remember, per MachineSet, the Machines it created or
// deleted and the cache does not reflect yet. Scaling on a stale cache
// would create or delete Machines twice.
type expectations struct {
	mu    sync.Mutex
	now   func() time.Time
	items map[types.NamespacedName]*expectation
}

type expectation struct {
	created sets.Set[string]    // names
	deleted sets.Set[types.UID] // UIDs
	since   time.Time
}

func newExpectations() *expectations {
	return &expectations{now: time.Now, items: map[types.NamespacedName]*expectation{}}
}

// expect records names created and UIDs deleted by a MachineSet.
func (e *expectations) expect(key types.NamespacedName, created []string, deleted []types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.items[key]
	if !ok {
		x = &expectation{created: sets.New[string](), deleted: sets.New[types.UID]()}
		e.items[key] = x
	}
	x.created.Insert(created...)
	x.deleted.Insert(deleted...)
	x.since = e.now()
}

// satisfied reports whether the listed Machines show every recorded
// creation and deletion (or the records expired), forgetting what is
// seen.
func (e *expectations) satisfied(key types.NamespacedName, machines []clusterv1alpha1.Machine) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.items[key]
	if !ok {
		return true
	}
	if e.now().Sub(x.since) > expectationTTL {
		delete(e.items, key)
		return true
	}
	present := sets.New[types.UID]()
	for i := range machines {
		m := &machines[i]
		x.created.Delete(m.Name)
		if m.DeletionTimestamp == nil {
			present.Insert(m.UID)
		}
	}
	for uid := range x.deleted {
		if !present.Has(uid) {
			x.deleted.Delete(uid)
		}
	}
	if x.created.Len() == 0 && x.deleted.Len() == 0 {
		delete(e.items, key)
		return true
	}
	return false
}

// forget drops the records of a MachineSet.
func (e *expectations) forget(key types.NamespacedName) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.items, key)
}
