package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/remote/outage"
)

// ErrUnreachable is the error of a cluster whose last request found it
// unreachable within the retry window: no request is sent until the window
// has passed.
var ErrUnreachable = errors.New("the cluster is unreachable")

// unreachableWindow is how long after a request found a cluster
// unreachable the callers that share its connection fail at once instead of
// each waiting for a timeout of its own. The first request after the window
// tries again.
var unreachableWindow = 10 * time.Second

// health is what the requests of one connection saw: whether the cluster
// answered the last one, and since when it has not.
type health struct {
	mu sync.Mutex
	// failing is set by a request that found the cluster unreachable and
	// cleared by any answer.
	failing bool
	// since is when the current run of failures began; last when its
	// latest failure happened, and lastErr what that failure said (a
	// transport error, which names the host but no credential).
	since, last time.Time
	lastErr     string
}

// Health is the health state of a connection.
type Health struct {
	// Reachable is false when the last request that ended found the
	// cluster unreachable.
	Reachable bool
	// Since is when the cluster became unreachable; zero when it is
	// reachable.
	Since time.Time
	// Error is the last failure.
	Error string
}

// wrap is a transport wrapper that records the outcome of every request.
// A request that ends because its caller gave up says nothing about the
// cluster and is not recorded.
func (h *health) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		switch {
		case err == nil && resp.StatusCode == http.StatusServiceUnavailable:
			h.record(fmt.Errorf("%s %s: %s", req.Method, req.URL.Path, resp.Status))
		case err == nil:
			h.record(nil)
		case errors.Is(err, context.Canceled) || req.Context().Err() == context.Canceled:
		case outage.Unreachable(err):
			h.record(err)
		}
		return resp, err
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// record notes the outcome of one request: nil for an answer.
func (h *health) record(err error) {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		h.failing, h.since, h.lastErr = false, time.Time{}, ""
		return
	}
	if !h.failing {
		h.failing, h.since = true, now
	}
	h.last, h.lastErr = now, err.Error()
}

// state returns the health state.
func (h *health) state() Health {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.failing {
		return Health{Reachable: true}
	}
	return Health{Since: h.since, Error: h.lastErr}
}

// check returns ErrUnreachable while the last request found the cluster
// unreachable less than unreachableWindow ago; name names the cluster in
// the error.
func (h *health) check(name string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.failing {
		return nil
	}
	wait := unreachableWindow - time.Since(h.last)
	if wait <= 0 {
		return nil
	}
	return fmt.Errorf("%w: %s has not answered since %s (%s); next attempt in %s",
		ErrUnreachable, name, h.since.UTC().Format(time.RFC3339), h.lastErr, wait.Round(time.Second))
}
