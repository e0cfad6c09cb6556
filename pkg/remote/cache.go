package remote

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/remote/outage"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/restmapper"
)

// caching is the REST mapper of a connection, built on first use, and
// the last list or watch error of the connection's caches.
type caching struct {
	once   sync.Once
	mapper meta.RESTMapper
	err    error

	mu        sync.Mutex
	lastWatch error
}

// Mapper returns the REST mapper of the connection, built on first use and
// shared by every client and cache built on the connection, so a remote
// cluster's API is discovered once per connection. It asks the cluster
// nothing until a kind is mapped, and remembers the mappings it found.
func (c *Connection) Mapper() (meta.RESTMapper, error) {
	c.caching.once.Do(func() {
		c.caching.mapper, c.caching.err = restmapper.New(c.Config, c.HTTPClient)
	})
	return c.caching.mapper, c.caching.err
}

// NewClient returns a client that talks to the cluster directly; mapper
// nil means the connection's (see Mapper).
func (c *Connection) NewClient(scheme *runtime.Scheme, mapper meta.RESTMapper) (ctrlruntimeclient.Client, error) {
	mapper, err := c.mapperOr(mapper)
	if err != nil {
		return nil, err
	}
	cl, err := ctrlruntimeclient.New(c.Config, ctrlruntimeclient.Options{HTTPClient: c.HTTPClient, Scheme: scheme, Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("failed to create the client of %s: %w", kubeconfig.Server(c.Config.Host), err)
	}
	return cl, nil
}

func (c *Connection) mapperOr(mapper meta.RESTMapper) (meta.RESTMapper, error) {
	if mapper != nil {
		return mapper, nil
	}
	return c.Mapper()
}

// CacheOptions configures a cache built with NewCache.
type CacheOptions struct {
	// Scheme holds the cached types; client-go's when nil.
	Scheme *runtime.Scheme
	// Mapper maps the cached kinds; the connection's when nil.
	Mapper meta.RESTMapper
	// Namespaces limits namespaced kinds to these namespaces; every
	// namespace when empty.
	Namespaces []string
	// LabelSelector limits every kind to the objects it selects.
	LabelSelector labels.Selector
	// Transform trims every object before it is stored.
	Transform toolscache.TransformFunc
	// Patient retries the lists and watches that find the cluster
	// unreachable at a fixed interval, without the informers' growing
	// backoff, and without reporting them as watch errors (see
	// outage.NewInformer). Use it for caches that must resume soon after an
	// outage; leave it off where a read that waits for a sync should hear
	// why the cluster does not answer (LastWatchError).
	Patient bool
}

// NewCache builds a controller-runtime cache of the cluster, without
// contacting it: every informer starts on the first use of its kind and
// streams over StreamClient, which shares the connection's transport,
// rate limiter and health but has no timeout. The last list or watch error
// of any of the connection's caches is kept for LastWatchError.
func (c *Connection) NewCache(o CacheOptions) (cache.Cache, error) {
	mapper, err := c.mapperOr(o.Mapper)
	if err != nil {
		return nil, err
	}
	opts := cache.Options{
		HTTPClient:               c.StreamClient,
		Scheme:                   o.Scheme,
		Mapper:                   mapper,
		DefaultLabelSelector:     o.LabelSelector,
		DefaultTransform:         o.Transform,
		DefaultWatchErrorHandler: c.recordWatchError,
	}
	if len(o.Namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, namespace := range o.Namespaces {
			opts.DefaultNamespaces[namespace] = cache.Config{}
		}
	}
	if o.Patient {
		opts.NewInformer = outage.NewInformer
	}
	ca, err := cache.New(c.Config, opts)
	if err != nil {
		return nil, fmt.Errorf("failed to create a cache of %s: %w", kubeconfig.Server(c.Config.Host), err)
	}
	return ca, nil
}

// recordWatchError keeps the last list or watch error of any informer so a
// sync that times out can say why, then lets client-go log it as usual.
func (c *Connection) recordWatchError(ctx context.Context, r *toolscache.Reflector, err error) {
	c.caching.mu.Lock()
	c.caching.lastWatch = fmt.Errorf("%s: %w", r.TypeDescription(), err)
	c.caching.mu.Unlock()
	toolscache.DefaultWatchErrorHandler(ctx, r, err)
}

// LastWatchError returns the last list or watch error of the connection's
// caches; nil when there was none.
func (c *Connection) LastWatchError() error {
	c.caching.mu.Lock()
	defer c.caching.mu.Unlock()
	return c.caching.lastWatch
}
