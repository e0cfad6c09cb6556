package machine

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// ownWriteWindow bounds how long a reconcile waits for the cache to show
// the controller's own last write of a Machine. The cache normally lags by
// milliseconds; a copy that differs for longer was written by someone else
// after us, and is then reconciled as it is.
const ownWriteWindow = time.Second

// ownWrites remembers, per Machine, the resourceVersion the controller's
// own last write produced. An event that arrives while a reconcile writes
// (the Node it patches, say) runs the next reconcile at once, and the cache
// may not have the write yet: that reconcile would compute the same status
// from the older copy and send the same patch again. The zero value is
// ready to use and safe for concurrent use.
type ownWrites struct {
	ownRecords[string]
}

// behind returns how long to wait before reconciling key, whose cached
// copy has cachedVersion: the rest of ownWriteWindow while the cache does
// not yet show the controller's own last write (its watch event brings the
// reconcile sooner), else 0. The record is dropped once the cache shows
// the write or the window has passed.
func (w *ownWrites) behind(key types.NamespacedName, cachedVersion string, now time.Time) time.Duration {
	return w.wait(key, ownWriteWindow, now, func(written string) bool { return written != cachedVersion })
}
