package tenant

import (
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	remotekubeconfig "github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"
)

// requestTimeout bounds every request to a tenant cluster.
const requestTimeout = 30 * time.Second

// Clients keeps one uncached client per tenant namespace, rebuilt when the
// kubeconfig changes. The zero value is not usable: set Scheme.
type Clients struct {
	// Scheme is the scheme of the clients.
	Scheme *runtime.Scheme
	// Wrap, when set, wraps the config of every tenant client (tests count
	// requests with it).
	Wrap func(*rest.Config)
	// Mapper, when set, maps the kinds of every tenant client (see
	// StaticMapper); without it each client discovers its cluster's API.
	Mapper meta.RESTMapper

	mu      sync.Mutex
	entries map[string]tenantClient
}

type tenantClient struct {
	sum    [sha256.Size]byte
	client ctrlruntimeclient.Client
}

// Get returns the client of the tenant namespace for kubeconfig.
func (c *Clients) Get(namespace string, kubeconfig []byte) (ctrlruntimeclient.Client, error) {
	sum := sha256.Sum256(kubeconfig)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[namespace]; ok && e.sum == sum {
		return e.client, nil
	}
	cfg, err := RESTConfig(namespace, kubeconfig)
	if err != nil {
		return nil, err
	}
	// An unreachable tenant cluster must not hold a worker for long.
	cfg.Timeout = requestTimeout
	if c.Wrap != nil {
		c.Wrap(cfg)
	}
	cl, err := ctrlruntimeclient.New(cfg, ctrlruntimeclient.Options{Scheme: c.Scheme, Mapper: c.Mapper})
	if err != nil {
		return nil, fmt.Errorf("failed to create a client for the tenant cluster of %s: %w", namespace, err)
	}
	if c.entries == nil {
		c.entries = map[string]tenantClient{}
	}
	c.entries[namespace] = tenantClient{sum: sum, client: cl}
	return cl, nil
}

// Forget drops the client of a namespace.
func (c *Clients) Forget(namespace string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, namespace)
}

// RESTConfig parses the tenant kubeconfig of a namespace into a REST config
// with our user agent; the clients and the watches of tenant clusters share
// it. A kubeconfig that does not parse is kubeconfig.ErrInvalid, with a
// reason that quotes no part of it (the error reaches logs and conditions).
func RESTConfig(namespace string, data []byte) (*rest.Config, error) {
	cfg, _, err := remotekubeconfig.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("failed to parse the tenant kubeconfig of %s: %w", namespace, err)
	}
	cfg.UserAgent = "infra-controller"
	return cfg, nil
}
