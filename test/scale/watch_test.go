package scale

import (
	"context"
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// watchKinds returns a reader of the objects of kinds in env, served by
// watches that have synced, and the func that stops them. The scale-up
// waits read through it: listing every VM, Machine or Node from the API
// server at each check would cost the API servers more CPU than what is
// measured (at 1000 replicas a check of the controller run lists 1000 VMs
// and 1000 Machines, back to back), and more in the controller run, which
// waits on two lists, than in the raw run, which waits on one.
func watchKinds(tb testing.TB, env *envtest.Env, kinds ...ctrlruntimeclient.Object) (cache.Cache, func()) {
	tb.Helper()
	c, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(tb.Context())
	for _, kind := range kinds {
		if _, err := c.GetInformer(ctx, kind); err != nil {
			cancel()
			tb.Fatal(err)
		}
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Start(ctx) }()
	stop := func() { cancel(); <-done }
	if !c.WaitForCacheSync(ctx) {
		stop()
		tb.Fatal("the watches of the scale-up did not sync")
	}
	return c, stop
}

// noCopy lists from the watch cache without copying every object at every
// check; the waits only read.
var noCopy = ctrlruntimeclient.UnsafeDisableDeepCopy
