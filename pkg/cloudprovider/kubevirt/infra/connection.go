package infra

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cachetrim"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/remote"
)

// connection is everything shared by the clients of one kubeconfig: the
// remote connection (REST configuration, rate limiter, transport, health,
// REST mapper), the direct writer and the cache of cluster-scoped kinds.
type connection struct {
	*remote.Connection
	scheme *runtime.Scheme
	writer ctrlruntimeclient.Client
	opts   Options

	clusterCache cache.Cache
	stopCluster  context.CancelFunc

	mu        sync.Mutex
	notServed map[schema.GroupVersionKind]time.Time
}

// newConnection builds the shared parts for a kubeconfig and starts the
// (still empty) cluster-scoped cache. It does no request: discovery and
// informers start on first use.
// Errors wrapping kubeconfig.ErrInvalid mean the kubeconfig is unusable.
func newConnection(ctx context.Context, data []byte, scheme *runtime.Scheme, opts Options) (*connection, error) {
	// No timeout: the HTTP client carries the caches' watch streams too.
	rc, err := remote.Dial(data, remote.Options{UserAgent: opts.UserAgent, QPS: opts.QPS, Burst: opts.Burst, Wrap: func(cfg *rest.Config) {
		if opts.WrapTransport != nil {
			cfg.Wrap(opts.WrapTransport)
		}
		if opts.WarningHandler != nil {
			cfg.WarningHandler = opts.WarningHandler
		}
	}})
	if err != nil {
		return nil, err
	}
	writer, err := rc.NewClient(scheme, nil)
	if err != nil {
		return nil, fmt.Errorf("failed to create the infra client: %w", err)
	}
	c := &connection{Connection: rc, scheme: scheme, writer: writer, opts: opts, notServed: map[schema.GroupVersionKind]time.Time{}}
	c.clusterCache, c.stopCluster, err = c.startCache(ctx)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// startCache creates and starts a cache of namespaces, or of all
// namespaces when none is given. The cache lives until the returned
// function is called, not as long as ctx, which only bounds the start.
func (c *connection) startCache(ctx context.Context, namespaces ...string) (cache.Cache, context.CancelFunc, error) {
	ca, err := c.NewCache(remote.CacheOptions{Scheme: c.scheme, Namespaces: namespaces, Transform: cachetrim.Infra})
	if err != nil {
		return nil, nil, fmt.Errorf("failed to create the infra cache: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		// Start returns when runCtx ends; its only error is a second start.
		_ = ca.Start(runCtx)
	}()
	// With no informer yet this only waits for the cache to be started, so
	// reads never see ErrCacheNotStarted.
	if !ca.WaitForCacheSync(ctx) {
		cancel()
		return nil, nil, fmt.Errorf("failed to start the infra cache: %w", ctx.Err())
	}
	return ca, cancel, nil
}

// scope reports whether the infra cluster serves gvk and whether it is
// namespaced. Kinds found not served are remembered for NotServedTTL, so a
// missing optional API costs no discovery request per call.
func (c *connection) scope(gvk schema.GroupVersionKind) (served, namespaced bool, err error) {
	c.mu.Lock()
	since, known := c.notServed[gvk]
	c.mu.Unlock()
	if known && time.Since(since) < c.opts.NotServedTTL {
		return false, false, nil
	}
	mapper, err := c.Mapper()
	if err != nil {
		return false, false, err
	}
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		if !isNotServed(err) {
			return false, false, fmt.Errorf("failed to discover %s on the infra cluster: %w", gvk.GroupVersion(), err)
		}
		c.mu.Lock()
		c.notServed[gvk] = time.Now()
		c.mu.Unlock()
		return false, false, nil
	}
	c.mu.Lock()
	delete(c.notServed, gvk)
	c.mu.Unlock()
	return true, mapping.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// isNotServed tells a missing API (group, version or kind) from a failed
// discovery.
func isNotServed(err error) bool {
	var failed *apiutil.ErrResourceDiscoveryFailed
	if errors.As(err, &failed) {
		for _, sub := range *failed {
			if !apierrors.IsNotFound(sub) && !meta.IsNoMatchError(sub) {
				return false
			}
		}
		return true
	}
	return meta.IsNoMatchError(err)
}

// stop ends the cluster-scoped cache.
func (c *connection) stop() {
	c.stopCluster()
}
