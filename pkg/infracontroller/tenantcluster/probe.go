package tenantcluster

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// probes keeps, per TenantCluster, the client of the version request that
// tells whether its tenant cluster answers, so that every probe after the
// first reuses the client and its connections. An entry knows the
// kubeconfig it was built from by its SHA-256 only, never by its content;
// a changed kubeconfig replaces the entry. The zero value is ready to use.
type probes struct {
	mu      sync.Mutex
	entries map[string]probeClient
}

// probeClient is the version client of one TenantCluster.
type probeClient struct {
	// sum is the SHA-256 of the kubeconfig the client was built from.
	sum [sha256.Size]byte
	// client sends the version request.
	client rest.Interface
	// http is the HTTP client under client, whose idle connections are
	// closed when the entry goes.
	http *http.Client
}

// probe asks the tenant API server of TenantCluster name for its version,
// within probeTimeout, with the client of kubeconfig, whose REST config is
// cfg.
func (p *probes) probe(ctx context.Context, name string, kubeconfig []byte, cfg *rest.Config) error {
	c, err := p.client(name, kubeconfig, cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	body, err := c.Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return err
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return fmt.Errorf("the answer to GET /version is not a version: %w", err)
	}
	return nil
}

// client returns the version client of TenantCluster name for kubeconfig,
// building it when there is none or the kubeconfig changed.
func (p *probes) client(name string, kubeconfig []byte, cfg *rest.Config) (rest.Interface, error) {
	sum := sha256.Sum256(kubeconfig)
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.entries[name]; ok && e.sum == sum {
		return e.client, nil
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = probeTimeout
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create the HTTP client of the tenant cluster: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("failed to create a discovery client: %w", err)
	}
	p.dropLocked(name)
	if p.entries == nil {
		p.entries = map[string]probeClient{}
	}
	p.entries[name] = probeClient{sum: sum, client: dc.RESTClient(), http: httpClient}
	return dc.RESTClient(), nil
}

// forget drops the client of TenantCluster name.
func (p *probes) forget(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropLocked(name)
}

// dropLocked drops the client of TenantCluster name and closes its idle
// connections; p.mu is held.
func (p *probes) dropLocked(name string) {
	if e, ok := p.entries[name]; ok {
		e.http.CloseIdleConnections()
		delete(p.entries, name)
	}
}
