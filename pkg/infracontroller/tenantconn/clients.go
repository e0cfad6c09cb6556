package tenantconn

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/remote"
)

// requestTimeout bounds every request to a tenant cluster but the watches.
const requestTimeout = 30 * time.Second

// userAgent is the user agent of every request to a tenant cluster.
const userAgent = "infra-controller"

// The client-side rate limit of one tenant cluster, shared by every
// request the infra-controller sends there: its reconcilers' reads and
// writes, its watches and its probes.
const (
	tenantQPS   = 20
	tenantBurst = 40
)

// Clients keeps one connection per tenant namespace, rebuilt when the
// kubeconfig changes: one REST config, one transport and rate limiter, one
// uncached client, and the health the connection's requests saw. Every
// reconciler of the infra-controller that talks to a tenant cluster goes
// through the same Clients (see Access), and so do the tenant watches
// (Watches), so a tenant cluster costs one set of connections, and a
// rotated kubeconfig replaces it in one place. The zero value is usable;
// set Scheme, Mapper and Wrap before the first Get.
type Clients struct {
	// Scheme is the scheme of the clients; client-go's when nil.
	Scheme *runtime.Scheme
	// Wrap, when set, wraps the config of every tenant connection (tests
	// count requests with it).
	Wrap func(*rest.Config)
	// Mapper, when set, maps the kinds of every tenant client (see
	// StaticMapper); without it the client and the watch of a connection
	// share one mapper that discovers its cluster's API.
	Mapper meta.RESTMapper

	mu      sync.Mutex
	entries map[string]*conn
}

// conn is the connection to the tenant cluster of one namespace.
type conn struct {
	*remote.Connection
	namespace string
	client    ctrlruntimeclient.Client
}

// Get returns the client of the tenant namespace for kubeconfig.
func (c *Clients) Get(namespace string, kubeconfig []byte) (ctrlruntimeclient.Client, error) {
	cn, err := c.conn(namespace, kubeconfig)
	if err != nil {
		return nil, err
	}
	return cn.client, nil
}

// conn returns the connection of the tenant namespace for kubeconfig,
// building it when there is none or the kubeconfig changed.
func (c *Clients) conn(namespace string, kubeconfig []byte) (*conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[namespace]; ok && e.Of(kubeconfig) {
		return e, nil
	}
	cn, err := c.newConn(namespace, kubeconfig)
	if err != nil {
		return nil, err
	}
	c.dropLocked(namespace)
	if c.entries == nil {
		c.entries = map[string]*conn{}
	}
	c.entries[namespace] = cn
	return cn, nil
}

// newConn builds, without contacting the tenant cluster, the connection of
// kubeconfig.
func (c *Clients) newConn(namespace string, kubeconfig []byte) (*conn, error) {
	rc, err := remote.Dial(kubeconfig, remote.Options{
		UserAgent: userAgent, QPS: tenantQPS, Burst: tenantBurst, Timeout: requestTimeout, Wrap: c.Wrap,
	})
	if err != nil {
		return nil, fmt.Errorf("failed to use the tenant kubeconfig of %s: %w", namespace, err)
	}
	cn := &conn{Connection: rc, namespace: namespace}
	cn.client, err = rc.NewClient(c.Scheme, c.Mapper)
	if err != nil {
		return nil, fmt.Errorf("failed to create a client for the tenant cluster of %s: %w", namespace, err)
	}
	return cn, nil
}

// Forget drops the connection of a namespace.
func (c *Clients) Forget(namespace string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(namespace)
}

// dropLocked drops the connection of namespace and closes its idle
// connections; c.mu is held.
func (c *Clients) dropLocked(namespace string) {
	if e, ok := c.entries[namespace]; ok {
		e.Close()
		delete(c.entries, namespace)
	}
}

// Len returns the number of tenant connections.
func (c *Clients) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
