package infra

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

// Cluster returns the client of a kubeconfig and namespace (the one Get
// returns for them) as a controller-runtime cluster.Cluster: its cache is
// the client's informers, namespaced kinds in the namespace and
// cluster-scoped kinds cluster-wide, and its client reads from them and
// writes directly. A controller that watches the infra cluster through it
// shares each informer with the provider instead of running a second one
// for the same kind. The client is never closed for being idle (a watch
// would stop with it), only by Stop. Add the cluster to a manager so that
// controllers wait for its informers to sync; it starts nothing itself.
func (c *Clients) Cluster(ctx context.Context, kubeconfig []byte, namespace string) (cluster.Cluster, error) {
	c.mu.Lock()
	e, err := c.entryLocked(ctx, kubeconfig, namespace)
	if err == nil {
		e.pinned = true
	}
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	shared := &sharedCache{conn: e.conn, namespaced: e.cache}
	mapper, err := e.conn.Mapper()
	if err != nil {
		return nil, err
	}
	cl, err := cluster.New(e.conn.Config, func(o *cluster.Options) {
		o.Scheme = e.conn.scheme
		o.HTTPClient = e.conn.HTTPClient
		o.MapperProvider = func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return mapper, nil }
		o.NewCache = func(*rest.Config, cache.Options) (cache.Cache, error) { return shared, nil }
	})
	if err != nil {
		return nil, fmt.Errorf("failed to create the infra cluster of namespace %s: %w", e.client.Namespace, err)
	}
	return cl, nil
}

// sharedCache is the cache.Cache of one client: namespaced kinds are served
// by the cache of the client's namespace, cluster-scoped kinds by the
// connection's. Both caches run from their creation until Clients.Stop, so
// Start only waits for ctx to end.
type sharedCache struct {
	conn       *connection
	namespaced cache.Cache
}

var _ cache.Cache = &sharedCache{}

// cacheFor returns the cache of a kind; a kind the infra cluster does not
// serve is a NoKindMatchError.
func (s *sharedCache) cacheFor(gvk schema.GroupVersionKind) (cache.Cache, error) {
	served, namespaced, err := s.conn.scope(gvk)
	switch {
	case err != nil:
		return nil, err
	case !served:
		return nil, &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
	case namespaced:
		return s.namespaced, nil
	}
	return s.conn.clusterCache, nil
}

// cacheForObject returns the cache of an object's or a list's kind.
func (s *sharedCache) cacheForObject(obj runtime.Object) (cache.Cache, error) {
	gvk, err := apiutil.GVKForObject(obj, s.conn.scheme)
	if err != nil {
		return nil, fmt.Errorf("failed to find the kind of %T: %w", obj, err)
	}
	if meta.IsListType(obj) {
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	}
	return s.cacheFor(gvk)
}

// Get implements client.Reader.
func (s *sharedCache) Get(ctx context.Context, key ctrlruntimeclient.ObjectKey, obj ctrlruntimeclient.Object, opts ...ctrlruntimeclient.GetOption) error {
	ca, err := s.cacheForObject(obj)
	if err != nil {
		return err
	}
	return ca.Get(ctx, key, obj, opts...)
}

// List implements client.Reader.
func (s *sharedCache) List(ctx context.Context, list ctrlruntimeclient.ObjectList, opts ...ctrlruntimeclient.ListOption) error {
	ca, err := s.cacheForObject(list)
	if err != nil {
		return err
	}
	return ca.List(ctx, list, opts...)
}

// GetInformer implements cache.Informers.
func (s *sharedCache) GetInformer(ctx context.Context, obj ctrlruntimeclient.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	ca, err := s.cacheForObject(obj)
	if err != nil {
		return nil, err
	}
	return ca.GetInformer(ctx, obj, opts...)
}

// GetInformerForKind implements cache.Informers.
func (s *sharedCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	ca, err := s.cacheFor(gvk)
	if err != nil {
		return nil, err
	}
	return ca.GetInformerForKind(ctx, gvk, opts...)
}

// RemoveInformer implements cache.Informers.
func (s *sharedCache) RemoveInformer(ctx context.Context, obj ctrlruntimeclient.Object) error {
	ca, err := s.cacheForObject(obj)
	if err != nil {
		return err
	}
	return ca.RemoveInformer(ctx, obj)
}

// IndexField implements client.FieldIndexer.
func (s *sharedCache) IndexField(ctx context.Context, obj ctrlruntimeclient.Object, field string, extract ctrlruntimeclient.IndexerFunc) error {
	ca, err := s.cacheForObject(obj)
	if err != nil {
		return err
	}
	return ca.IndexField(ctx, obj, field, extract)
}

// Start implements cache.Informers. The caches already run (see
// sharedCache), so it only blocks until ctx ends.
func (s *sharedCache) Start(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// WaitForCacheSync implements cache.Informers: every informer of both
// caches has synced.
func (s *sharedCache) WaitForCacheSync(ctx context.Context) bool {
	return s.namespaced.WaitForCacheSync(ctx) && s.conn.clusterCache.WaitForCacheSync(ctx)
}
