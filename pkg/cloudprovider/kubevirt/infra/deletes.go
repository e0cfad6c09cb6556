package infra

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// deleteMemory is how long a Client remembers a deletion it sent: longer
// than its informers take to see the object go, even on a loaded API
// server.
const deleteMemory = time.Minute

// deletes remembers the objects a Client deleted, by UID, until their
// deletion reaches its informers: an object without finalizers is gone at
// once, but the cache shows it until the watch event arrives, and a
// repeated Cleanup in between would delete it again (a second DELETE,
// answered 404).
type deletes struct {
	mu   sync.Mutex
	sent map[types.UID]time.Time
}

// Deleted records that the object uid was deleted now.
func (c *Client) Deleted(uid types.UID) {
	c.deletes.mu.Lock()
	defer c.deletes.mu.Unlock()
	now := time.Now()
	if c.deletes.sent == nil {
		c.deletes.sent = map[types.UID]time.Time{}
	}
	for u, at := range c.deletes.sent {
		if now.Sub(at) > deleteMemory {
			delete(c.deletes.sent, u)
		}
	}
	c.deletes.sent[uid] = now
}

// DeleteSent reports whether the object uid was deleted through Deleted
// within deleteMemory; a cached copy of it is on its way out.
func (c *Client) DeleteSent(uid types.UID) bool {
	c.deletes.mu.Lock()
	defer c.deletes.mu.Unlock()
	at, ok := c.deletes.sent[uid]
	return ok && time.Since(at) <= deleteMemory
}
