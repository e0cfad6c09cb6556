package machine

import (
	"context"
	"fmt"
	"sync/atomic"

	"go.uber.org/zap"

	"k8c.io/machine-controller/sdk/bootstrap"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// bootstrapSecrets reads the operating-system-manager bootstrap Secrets of
// the namespace bootstrap.CloudInitSettingsNamespace. When the controller
// may list and watch Secrets there, they are read from a cache of that
// namespace alone, so a Machine's creation costs no request for its user
// data (nor a 404 where OSM runs not); otherwise, and until that cache has
// synced, each read is one GET. Secrets elsewhere (ConfigVar references of
// providerSpecs, in any namespace) are never cached: the controller has
// only "get" on them.
type bootstrapSecrets struct {
	// direct reads from the API server.
	direct ctrlruntimeclient.Reader
	// reviewer creates the SelfSubjectAccessReviews that tell whether the
	// cache may run.
	reviewer ctrlruntimeclient.Client
	// newCache creates the cache of the namespace's Secrets.
	newCache func() (cache.Cache, error)
	// cached is the synced cache; nil while reads go to the API server.
	cached atomic.Pointer[cache.Cache]
	log    *zap.SugaredLogger
}

// newBootstrapSecrets returns the reader of mgr's cluster; add it to mgr,
// whose start starts its cache.
func newBootstrapSecrets(mgr ctrl.Manager, log *zap.SugaredLogger) *bootstrapSecrets {
	return &bootstrapSecrets{
		direct:   mgr.GetAPIReader(),
		reviewer: mgr.GetClient(),
		newCache: func() (cache.Cache, error) {
			return cache.New(mgr.GetConfig(), cache.Options{
				HTTPClient: mgr.GetHTTPClient(),
				Scheme:     mgr.GetScheme(),
				Mapper:     mgr.GetRESTMapper(),
				ByObject: map[ctrlruntimeclient.Object]cache.ByObject{&corev1.Secret{}: {
					Namespaces: map[string]cache.Config{bootstrap.CloudInitSettingsNamespace: {}},
				}},
				DefaultTransform: cache.TransformStripManagedFields(),
			})
		},
		log: log,
	}
}

// Get reads a Secret: from the cache when it covers the namespace and has
// synced, else from the API server.
func (b *bootstrapSecrets) Get(ctx context.Context, key ctrlruntimeclient.ObjectKey, secret *corev1.Secret) error {
	if c := b.cached.Load(); c != nil && key.Namespace == bootstrap.CloudInitSettingsNamespace {
		return (*c).Get(ctx, key, secret)
	}
	return b.direct.Get(ctx, key, secret)
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: the cache
// is warm by the time this replica leads.
func (b *bootstrapSecrets) NeedLeaderElection() bool { return false }

// Start implements manager.Runnable. It asks the API server once whether
// the controller may list and watch the namespace's Secrets; if so it runs
// the cache until ctx ends and reads from it once synced. Without the
// permission reads stay direct until the next start.
func (b *bootstrapSecrets) Start(ctx context.Context) error {
	allowed, err := b.allowed(ctx)
	if err != nil {
		// Direct reads work without the cache; no reason to stop the
		// manager.
		b.log.Warnw("Reading bootstrap Secrets uncached: failed to check the permission to cache them", "error", err.Error())
		return nil
	}
	if !allowed {
		b.log.Infow("Reading bootstrap Secrets uncached: no permission to list and watch them", "namespace", bootstrap.CloudInitSettingsNamespace)
		return nil
	}
	c, err := b.newCache()
	if err != nil {
		return fmt.Errorf("failed to create the cache of the bootstrap Secrets: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	// The informer exists only once asked for; this also waits for its
	// first list.
	if _, err := c.GetInformer(ctx, &corev1.Secret{}); err != nil {
		if ctx.Err() == nil {
			b.log.Warnw("Reading bootstrap Secrets uncached: their informer did not start", "error", err.Error())
		}
		return <-done
	}
	b.cached.Store(&c)
	return <-done
}

// allowed reports whether the controller may list and watch the Secrets of
// the bootstrap namespace.
func (b *bootstrapSecrets) allowed(ctx context.Context) (bool, error) {
	for _, verb := range []string{"list", "watch"} {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: bootstrap.CloudInitSettingsNamespace, Verb: verb, Resource: "secrets"},
		}}
		if err := b.reviewer.Create(ctx, review); err != nil {
			return false, fmt.Errorf("failed to review %s on secrets in %s: %w", verb, bootstrap.CloudInitSettingsNamespace, err)
		}
		if !review.Status.Allowed {
			return false, nil
		}
	}
	return true, nil
}
