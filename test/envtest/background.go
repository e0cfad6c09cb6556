package envtest

import (
	"context"
	"sync"
	"testing"
	"time"
)

// StopTimeout bounds how long a Background waits for its function to
// return once its context ended.
const StopTimeout = time.Minute

// Background is a function RunInBackground runs: a manager's, a cache's or
// a watch's Start.
type Background struct {
	tb     testing.TB
	what   string
	cancel context.CancelFunc
	done   chan struct{}
	err    error
	once   sync.Once
}

// RunInBackground runs start until Stop is called or the test ends, then
// waits for it to return (at most StopTimeout). An error it returns, or
// an overrun, fails the test naming what runs.
func RunInBackground(tb testing.TB, what string, start func(context.Context) error) *Background {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b := &Background{tb: tb, what: what, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		b.err = start(ctx)
	}()
	tb.Cleanup(b.Stop)
	return b
}

// Done is closed once the function returned, also before Stop: a
// function that gives up on its own returns early.
func (b *Background) Done() <-chan struct{} {
	return b.done
}

// Stop ends the function's context and waits for it to return; calls
// after the first do nothing.
func (b *Background) Stop() {
	b.once.Do(func() {
		b.cancel()
		select {
		case <-b.done:
			if b.err != nil {
				b.tb.Errorf("%s: %v", b.what, b.err)
			}
		case <-time.After(StopTimeout):
			b.tb.Errorf("%s did not return within %s after its context ended", b.what, StopTimeout)
		}
	})
}
