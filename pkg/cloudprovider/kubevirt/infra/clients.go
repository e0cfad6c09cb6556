package infra

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// Option defaults.
const (
	DefaultQPS          float32 = 50
	DefaultBurst                = 100
	DefaultSyncTimeout          = 30 * time.Second
	DefaultIdleTimeout          = time.Hour
	DefaultNotServedTTL         = 5 * time.Minute
	DefaultUserAgent            = "kkp-kubevirt-provider"
)

// Options tune Clients. Zero values take the defaults above.
type Options struct {
	// QPS and Burst limit the requests to one infra cluster (per kubeconfig,
	// shared by all its namespaces and informers).
	QPS   float32
	Burst int
	// WrapTransport, if set, wraps the HTTP transport of every infra
	// connection, e.g. to count requests.
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// SyncTimeout bounds the wait for an informer's first sync.
	SyncTimeout time.Duration
	// IdleTimeout is how long a client may go unused before the next Get
	// closes it (e.g. after a kubeconfig rotation left it behind).
	IdleTimeout time.Duration
	// NotServedTTL is how long a kind the infra cluster did not serve is
	// believed absent before discovery is asked again.
	NotServedTTL time.Duration
	// UserAgent of infra requests.
	UserAgent string
	// WarningHandler, if set, receives the warnings the infra API server
	// and its admission webhooks answer with (client-go logs them
	// otherwise).
	WarningHandler rest.WarningHandler
}

func (o Options) withDefaults() Options {
	o.QPS = cmp.Or(o.QPS, DefaultQPS)
	o.Burst = cmp.Or(o.Burst, DefaultBurst)
	o.SyncTimeout = cmp.Or(o.SyncTimeout, DefaultSyncTimeout)
	o.IdleTimeout = cmp.Or(o.IdleTimeout, DefaultIdleTimeout)
	o.NotServedTTL = cmp.Or(o.NotServedTTL, DefaultNotServedTTL)
	o.UserAgent = cmp.Or(o.UserAgent, DefaultUserAgent)
	return o
}

// Client reaches one namespace of one infra cluster.
type Client struct {
	// Key names the client's kubeconfig and namespace (see Hold); zero
	// for a Client not returned by Clients.
	Key Key
	// Namespace is the resolved infra namespace (see ResolveNamespace).
	Namespace string
	// Reader reads from informers; see the package documentation.
	Reader ctrlruntimeclient.Reader
	// Writer talks to the API server directly. Use it for writes, and for
	// reads only where a fresh answer is worth a request.
	Writer ctrlruntimeclient.Client

	// kubeconfig starts the client's cache again when Hold finds it
	// stopped.
	kubeconfig []byte
	// deletes are the deletions the client sent (see Deleted).
	deletes deletes
}

// Clients caches one Client per kubeconfig and namespace. It is safe for
// concurrent use. Stop it to end all informers.
type Clients struct {
	opts   Options
	scheme *runtime.Scheme

	mu          sync.Mutex
	stopped     bool
	connections map[[sha256.Size]byte]*connection
	entries     map[Key]*entry
}

type entry struct {
	client *Client
	// conn and cache are the connection and the namespace's cache the
	// client reads through.
	conn     *connection
	cache    cache.Cache
	stop     context.CancelFunc
	lastUsed time.Time
	// pinned entries are never closed for being idle: a Cluster's watches
	// use their informers (see Clients.Cluster).
	pinned bool
	// holds counts the Holds not yet released; a held entry is never
	// closed for being idle, and the last Release closes it.
	holds int
	// indexes are the fields indexed through Held.IndexField.
	indexMu sync.Mutex
	indexes map[string]bool
}

// ErrStopped is returned by Get after Stop.
var ErrStopped = errors.New("infra clients are stopped")

// NewClients returns an empty cache.
func NewClients(opts Options) (*Clients, error) {
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	return &Clients{
		opts:        opts.withDefaults(),
		scheme:      scheme,
		connections: map[[sha256.Size]byte]*connection{},
		entries:     map[Key]*entry{},
	}, nil
}

// Get returns the client of a kubeconfig and namespace, creating it on first
// use. namespace is the explicitly chosen namespace (the spec's, else the
// provider's option) or "" for the kubeconfig's current-context namespace,
// else "default"; Client.Namespace is the result. Get does no request:
// discovery and informers start on the first read. Errors wrapping
// kubeconfig.ErrInvalid mean the kubeconfig is unusable.
func (c *Clients) Get(ctx context.Context, kubeconfig []byte, namespace string) (*Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, err := c.entryLocked(ctx, kubeconfig, namespace)
	if err != nil {
		return nil, err
	}
	return e.client, nil
}

// entryLocked returns the entry of a kubeconfig and namespace (see Get),
// creating it and its connection on first use.
func (c *Clients) entryLocked(ctx context.Context, kubeconfig []byte, namespace string) (*entry, error) {
	hash := sha256.Sum256(kubeconfig)
	if c.stopped {
		return nil, ErrStopped
	}
	now := time.Now()
	c.sweepLocked(now)

	conn, ok := c.connections[hash]
	if !ok {
		var err error
		if conn, err = newConnection(ctx, kubeconfig, c.scheme, c.opts); err != nil {
			return nil, err
		}
		c.connections[hash] = conn
	}
	key := Key{kubeconfig: hash, Namespace: ResolveNamespace(namespace, "", conn.Namespace)}
	if e, ok := c.entries[key]; ok {
		e.lastUsed = now
		return e, nil
	}
	nsCache, stop, err := conn.startCache(ctx, key.Namespace)
	if err != nil {
		return nil, fmt.Errorf("failed to start the infra cache of namespace %s: %w", key.Namespace, err)
	}
	client := &Client{
		Key:        key,
		Namespace:  key.Namespace,
		Reader:     &cachedReader{conn: conn, namespace: key.Namespace, cache: nsCache},
		Writer:     conn.writer,
		kubeconfig: kubeconfig,
	}
	e := &entry{client: client, conn: conn, cache: nsCache, stop: stop, lastUsed: now}
	c.entries[key] = e
	return e, nil
}

// sweepLocked closes clients unused for IdleTimeout, unless pinned or
// held, and connections left without clients.
func (c *Clients) sweepLocked(now time.Time) {
	for key, e := range c.entries {
		if !e.pinned && e.holds == 0 && now.Sub(e.lastUsed) >= c.opts.IdleTimeout {
			e.stop()
			delete(c.entries, key)
		}
	}
	c.closeUnusedLocked()
}

// closeUnusedLocked closes the connections left without clients.
func (c *Clients) closeUnusedLocked() {
	for hash, conn := range c.connections {
		if !c.inUseLocked(hash) {
			conn.stop()
			delete(c.connections, hash)
		}
	}
}

func (c *Clients) inUseLocked(hash [sha256.Size]byte) bool {
	for key := range c.entries {
		if key.kubeconfig == hash {
			return true
		}
	}
	return false
}

// Len returns the number of cached clients.
func (c *Clients) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Stop ends every informer and makes later Gets fail with ErrStopped.
func (c *Clients) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	for key, e := range c.entries {
		e.stop()
		delete(c.entries, key)
	}
	for hash, conn := range c.connections {
		conn.stop()
		delete(c.connections, hash)
	}
}
