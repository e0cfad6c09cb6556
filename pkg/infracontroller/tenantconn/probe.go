package tenantconn

import (
	"context"
	"time"

	remotekubeconfig "github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/remote"
)

// probeTimeout bounds the request that checks a tenant cluster answers.
const probeTimeout = 5 * time.Second

// Probe asks the tenant API server of namespace for its version, within
// probeTimeout, over the namespace's connection for kubeconfig (built
// when there is none or the kubeconfig changed). Unlike the requests of
// the reconcilers it is sent while the cluster is known to be unreachable:
// it is how the TenantCluster controller finds out, and its outcome is
// the connection's health from then on. host is the API server the
// kubeconfig names; a kubeconfig that cannot be used is
// kubeconfig.ErrInvalid, and host is then empty.
func (c *Clients) Probe(ctx context.Context, namespace string, kubeconfig []byte) (host string, err error) {
	cn, err := c.conn(namespace, kubeconfig)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	_, err = cn.Version(ctx)
	return remotekubeconfig.Server(cn.Config.Host), err
}

// Health returns the health state of the connection of namespace; ok is
// false without one.
func (c *Clients) Health(namespace string) (h remote.Health, ok bool) {
	c.mu.Lock()
	e, ok := c.entries[namespace]
	c.mu.Unlock()
	if !ok {
		return remote.Health{}, false
	}
	return e.Health(), true
}
