package infra

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Key names the client of one kubeconfig and namespace: the kubeconfig's
// SHA-256 and the resolved namespace. Keys are comparable.
type Key struct {
	kubeconfig [sha256.Size]byte
	// Namespace is the resolved infra namespace.
	Namespace string
}

// String names the key in logs without the kubeconfig: the first 12 hex
// digits of its SHA-256 and the namespace.
func (k Key) String() string {
	return "sha256:" + hex.EncodeToString(k.kubeconfig[:6]) + "/" + k.Namespace
}

// Held is a client's cache held open for watches (see Clients.Hold).
type Held struct {
	// Client is the client the cache belongs to, as Get returns it.
	Client *Client
	// Cache serves namespaced kinds from the cache of the client's
	// namespace and cluster-scoped kinds from the connection's: event
	// handlers added to its informers see what the client reads. It runs
	// already; do not start it.
	Cache cache.Cache

	entry *entry
}

// errNotReturned is the error of Hold for a Client that Clients did not
// return.
var errNotReturned = errors.New("the infra client was not returned by these clients")

// Hold keeps the cache of client's kubeconfig and namespace running, and
// never closes it for being idle, until Release of client.Key has been
// called once for each Hold; it returns the cache for watches. A client
// whose cache was closed since Get returned it gets a new one (then
// Held.Client is no longer client).
func (c *Clients) Hold(ctx context.Context, client *Client) (*Held, error) {
	if client == nil || client.kubeconfig == nil {
		return nil, errNotReturned
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, err := c.entryLocked(ctx, client.kubeconfig, client.Namespace)
	if err != nil {
		return nil, err
	}
	e.holds++
	return &Held{Client: e.client, Cache: &sharedCache{conn: e.conn, namespaced: e.cache}, entry: e}, nil
}

// Release ends one Hold of key. The last one stops the cache of key (all
// its informers) unless Cluster pinned it, and with the last cache of a
// kubeconfig its connection; a later Get or Hold starts them again.
func (c *Clients) Release(key Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || e.holds == 0 {
		return
	}
	e.holds--
	if e.holds > 0 || e.pinned {
		return
	}
	e.stop()
	delete(c.entries, key)
	c.closeUnusedLocked()
}

// Holds returns the number of Holds of key not yet released.
func (c *Clients) Holds(key Key) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		return e.holds
	}
	return 0
}

// IndexField adds an index to the informer of obj's kind, once per cache:
// a second call for the same kind and field, by this or another Hold of
// the same running cache, does nothing.
func (h *Held) IndexField(ctx context.Context, obj ctrlruntimeclient.Object, field string, extract ctrlruntimeclient.IndexerFunc) error {
	gvk, err := apiutil.GVKForObject(obj, h.entry.conn.scheme)
	if err != nil {
		return fmt.Errorf("failed to find the kind of %T: %w", obj, err)
	}
	name := indexName(gvk, field)
	h.entry.indexMu.Lock()
	defer h.entry.indexMu.Unlock()
	if h.entry.indexes[name] {
		return nil
	}
	if err := h.Cache.IndexField(ctx, obj, field, extract); err != nil {
		return fmt.Errorf("failed to index %s by %s: %w", gvk.Kind, field, err)
	}
	if h.entry.indexes == nil {
		h.entry.indexes = map[string]bool{}
	}
	h.entry.indexes[name] = true
	return nil
}

// indexName names an index of a kind.
func indexName(gvk schema.GroupVersionKind, field string) string {
	return gvk.String() + "/" + field
}
