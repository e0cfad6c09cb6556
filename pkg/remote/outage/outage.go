// Package outage keeps the list and watch calls of informers retrying at a
// steady pace while their API server is unreachable, so that caches resume
// within a second of its return. client-go's reflector otherwise backs off
// exponentially with jitter (0.8 s doubling to 30 s, up to twice that), so
// a 40 s outage left a controller blind for up to a minute after the API
// server was back.
package outage

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// RetryInterval is how often a list or watch is retried while the API
// server is unreachable.
const RetryInterval = time.Second

// NewInformer is a controller-runtime cache.Options.NewInformer: the
// informer client-go would make, with a list and watch that wait out an
// unreachable API server.
func NewInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	return toolscache.NewSharedIndexInformer(Patient(lw, RetryInterval), obj, resync, indexers)
}

// Patient wraps lw so that a list or watch that fails because the API
// server cannot be reached is retried every interval until it succeeds,
// fails otherwise, or its context ends. The reflector never sees those
// failures, so its backoff does not grow during an outage.
func Patient(lw toolscache.ListerWatcher, interval time.Duration) toolscache.ListerWatcher {
	return patient{lw: toolscache.ToListerWatcherWithContext(lw), interval: interval}
}

type patient struct {
	lw       toolscache.ListerWatcherWithContext
	interval time.Duration
}

func (p patient) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return retry(ctx, p.interval, func() (runtime.Object, error) { return p.lw.ListWithContext(ctx, opts) })
}

func (p patient) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return retry(ctx, p.interval, func() (watch.Interface, error) { return p.lw.WatchWithContext(ctx, opts) })
}

// List and Watch serve callers without a context; they retry until the
// call succeeds or fails otherwise.
func (p patient) List(opts metav1.ListOptions) (runtime.Object, error) {
	return p.ListWithContext(context.Background(), opts)
}

func (p patient) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return p.WatchWithContext(context.Background(), opts)
}

// retry calls f until it returns anything but an unreachable error, waiting
// interval between calls; when ctx ends it returns f's last error.
func retry[T any](ctx context.Context, interval time.Duration, f func() (T, error)) (T, error) {
	for {
		v, err := f()
		if err == nil || !Unreachable(err) {
			return v, err
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, err
		case <-t.C:
		}
	}
}

// Unreachable reports whether err says that the API server could not be
// reached or is not serving yet, rather than that it refused the request.
func Unreachable(err error) bool {
	var opErr *net.OpError
	var netErr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	case errors.As(err, &opErr):
		// Dial, read and write errors of the connection itself.
		return true
	case errors.As(err, &netErr) && netErr.Timeout():
		return true
	case apierrors.IsServiceUnavailable(err):
		// A kube-apiserver that is starting answers 503 until ready.
		return true
	}
	return false
}
