package machine

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// ownRecords remembers, per Machine, one value of the controller's own
// last action (the resourceVersion a write produced, the UID of the Machine
// whose instance it created) and when it happened, until its cache shows
// the action. The zero value is ready to use and safe for concurrent use.
type ownRecords[V comparable] struct {
	mu      sync.Mutex
	records map[types.NamespacedName]ownRecord[V]
}

type ownRecord[V comparable] struct {
	value V
	at    time.Time
}

// record notes value for key.
func (o *ownRecords[V]) record(key types.NamespacedName, value V, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.records == nil {
		o.records = map[types.NamespacedName]ownRecord[V]{}
	}
	o.records[key] = ownRecord[V]{value: value, at: now}
}

// wait returns the rest of window since key's record while wanted accepts
// the recorded value, else 0; the record is dropped then.
func (o *ownRecords[V]) wait(key types.NamespacedName, window time.Duration, now time.Time, wanted func(V) bool) time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	last, ok := o.records[key]
	if !ok {
		return 0
	}
	if rest := window - now.Sub(last.at); rest > 0 && wanted(last.value) {
		return rest
	}
	delete(o.records, key)
	return 0
}

// forget drops the record of key.
func (o *ownRecords[V]) forget(key types.NamespacedName) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.records, key)
}
