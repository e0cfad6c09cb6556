package queue

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestRateLimiterStopsAtMaxDelay(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxDelay time.Duration
		want     time.Duration
	}{
		{"default", 0, DefaultMaxRetryDelay},
		{"configured", 30 * time.Second, 30 * time.Second},
		{"below the base delay", time.Millisecond, baseRetryDelay},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := RateLimiter(tc.maxDelay)
			item := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "machine"}}
			// The first failures double from 5 ms; controller-runtime's
			// default would reach 1000 s after 18 of them.
			if got := l.When(item); got != baseRetryDelay {
				t.Errorf("first retry after %s, want %s", got, baseRetryDelay)
			}
			if got := l.When(item); got != min(2*baseRetryDelay, tc.want) {
				t.Errorf("second retry after %s, want %s", got, min(2*baseRetryDelay, tc.want))
			}
			var last time.Duration
			for range 40 {
				last = l.When(item)
			}
			if last != tc.want {
				t.Errorf("after 42 failures the retry waits %s, want %s", last, tc.want)
			}
			// Success resets the object's backoff; others are unaffected.
			l.Forget(item)
			if got := l.When(item); got != baseRetryDelay {
				t.Errorf("first retry after Forget waits %s, want %s", got, baseRetryDelay)
			}
			other := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "other"}}
			if got := l.NumRequeues(other); got != 0 {
				t.Errorf("another object has %d requeues, want 0", got)
			}
		})
	}
}

func TestControllerOptions(t *testing.T) {
	got := Options{Workers: 0, SkipNameValidation: true}.Controller()
	if got.MaxConcurrentReconciles != 1 {
		t.Errorf("MaxConcurrentReconciles = %d, want 1 for Workers 0", got.MaxConcurrentReconciles)
	}
	if got.SkipNameValidation == nil || !*got.SkipNameValidation {
		t.Error("SkipNameValidation not passed on")
	}
	if got.RateLimiter == nil {
		t.Fatal("no RateLimiter: controller-runtime's default backoff would reach 1000 s")
	}
	if got := (Options{Workers: 8}).Controller().MaxConcurrentReconciles; got != 8 {
		t.Errorf("MaxConcurrentReconciles = %d, want 8", got)
	}
}
