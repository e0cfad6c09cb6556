package machinedeployment

import (
	"sync"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"k8s.io/apimachinery/pkg/types"
)

// pendingTTL bounds how long a MachineDeployment waits for its cache to
// show its own MachineSet changes.
const pendingTTL = time.Minute

// pending remembers, per MachineDeployment, the MachineSets it created
// and the generations its patches gave MachineSets, until the cache shows
// them. Rolling on a stale view would create a MachineSet twice or scale
// from outdated replicas.
type pending struct {
	mu    sync.Mutex
	now   func() time.Time
	items map[types.NamespacedName]*pendingItem
}

type pendingItem struct {
	created     map[string]bool     // names
	generations map[types.UID]int64 // minimum generation to see
	since       time.Time
}

func newPending() *pending {
	return &pending{now: time.Now, items: map[types.NamespacedName]*pendingItem{}}
}

func (p *pending) item(key types.NamespacedName) *pendingItem {
	x, ok := p.items[key]
	if !ok {
		x = &pendingItem{created: map[string]bool{}, generations: map[types.UID]int64{}}
		p.items[key] = x
	}
	x.since = p.now()
	return x
}

// created records a MachineSet the MachineDeployment created.
func (p *pending) created(key types.NamespacedName, name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.item(key).created[name] = true
}

// patched records the generation a patch gave a MachineSet.
func (p *pending) patched(key types.NamespacedName, ms *clusterv1alpha1.MachineSet) {
	p.mu.Lock()
	defer p.mu.Unlock()
	x := p.item(key)
	x.generations[ms.UID] = max(x.generations[ms.UID], ms.Generation)
}

// synced reports whether the listed MachineSets show every recorded
// creation and patch (or the records expired), forgetting what is seen,
// and whether each MachineSet's status describes its current spec.
func (p *pending) synced(key types.NamespacedName, sets []*clusterv1alpha1.MachineSet) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	fresh := true
	for _, ms := range sets {
		if ms.DeletionTimestamp == nil && ms.Status.ObservedGeneration < ms.Generation {
			fresh = false
		}
	}
	x, ok := p.items[key]
	if !ok {
		return fresh
	}
	if p.now().Sub(x.since) > pendingTTL {
		delete(p.items, key)
		return true
	}
	for _, ms := range sets {
		delete(x.created, ms.Name)
		if g, ok := x.generations[ms.UID]; ok && ms.Generation >= g {
			delete(x.generations, ms.UID)
		}
	}
	if len(x.created) > 0 || len(x.generations) > 0 {
		return false
	}
	delete(p.items, key)
	return fresh
}

// forget drops the records of a MachineDeployment.
func (p *pending) forget(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.items, key)
}
