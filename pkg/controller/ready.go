package controller

import (
	"context"
	"errors"
	"net/http"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

// readyWait bounds how long one readiness probe waits for the caches.
const readyWait = time.Second

// cachesSynced is a readiness check that passes once every informer of c
// has synced.
func cachesSynced(c cache.Cache) healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), readyWait)
		defer cancel()
		if !c.WaitForCacheSync(ctx) {
			return errors.New("the informer caches have not synced yet")
		}
		return nil
	}
}
