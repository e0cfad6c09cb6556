package storageclass

import (
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// requestTimeout bounds every request to a tenant cluster.
const requestTimeout = 30 * time.Second

// tenantClients keeps one uncached client per tenant namespace, rebuilt
// when the kubeconfig changes.
type tenantClients struct {
	scheme *runtime.Scheme
	// wrap, when set, wraps the config of every tenant client (tests count
	// requests with it).
	wrap func(*rest.Config)

	mu      sync.Mutex
	entries map[string]tenantClient
}

type tenantClient struct {
	sum    [sha256.Size]byte
	client ctrlruntimeclient.Client
}

// get returns the client of the tenant namespace for kubeconfig.
func (c *tenantClients) get(namespace string, kubeconfig []byte) (ctrlruntimeclient.Client, error) {
	sum := sha256.Sum256(kubeconfig)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[namespace]; ok && e.sum == sum {
		return e.client, nil
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("failed to parse the tenant kubeconfig of %s: %w", namespace, err)
	}
	cfg.UserAgent = "infra-controller"
	// An unreachable tenant cluster must not hold a worker for long.
	cfg.Timeout = requestTimeout
	if c.wrap != nil {
		c.wrap(cfg)
	}
	cl, err := ctrlruntimeclient.New(cfg, ctrlruntimeclient.Options{Scheme: c.scheme})
	if err != nil {
		return nil, fmt.Errorf("failed to create a client for the tenant cluster of %s: %w", namespace, err)
	}
	if c.entries == nil {
		c.entries = map[string]tenantClient{}
	}
	c.entries[namespace] = tenantClient{sum: sum, client: cl}
	return cl, nil
}

// forget drops the client of a namespace.
func (c *tenantClients) forget(namespace string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, namespace)
}
