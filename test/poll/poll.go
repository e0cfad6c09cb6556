// Package poll is how tests wait for a condition that another process or
// goroutine brings about: one interval, one timeout rule and one failure
// message for every test of the repository.
package poll

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// Interval is the wait between two checks.
const Interval = 50 * time.Millisecond

// Wait checks until check returns nil, which it returns, or until timeout
// has passed or ctx ends, when it returns check's last error, saying how
// long it waited. An error made by Final ends the wait at once and is
// returned as it is. Wait is the variant of Until for code without a
// testing.TB, such as a benchmark harness or test/envtest.
func Wait(ctx context.Context, timeout time.Duration, check func() error) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ticker := time.NewTicker(Interval)
	defer ticker.Stop()
	for {
		last := check()
		if last == nil {
			return nil
		}
		if f := (final{}); errors.As(last, &f) {
			return f.err
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("not so after %s: %w", timeout, last)
			}
			return fmt.Errorf("not so when the wait was cancelled after %s: %w", time.Since(start).Round(time.Millisecond), last)
		case <-ticker.C:
		}
	}
}

// final marks an error that no later check can change.
type final struct{ err error }

func (f final) Error() string { return f.err.Error() }

func (f final) Unwrap() error { return f.err }

// Final marks err, returned by a check, as one that no later check can
// change (a process that exited, a request refused for good): Wait returns
// it at once instead of checking again. Final(nil) is nil.
func Final(err error) error {
	if err == nil {
		return nil
	}
	return final{err: err}
}

// Until checks until check returns nil and fails tb with check's last
// error once timeout has passed. The error check returns says what is not
// so yet, e.g. "Machine m has no nodeRef; phase Provisioning".
func Until(tb testing.TB, timeout time.Duration, check func() error) {
	tb.Helper()
	if err := Wait(tb.Context(), timeout, check); err != nil {
		tb.Fatal(err)
	}
}

// UntilTrue checks until cond returns true and fails tb, saying what it
// waited for, once timeout has passed; an error from cond fails tb at once.
func UntilTrue(tb testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	tb.Helper()
	if err := Wait(tb.Context(), timeout, func() error {
		ok, err := cond()
		switch {
		case err != nil:
			return Final(fmt.Errorf("waiting for %s: %w", what, err))
		case !ok:
			return fmt.Errorf("waiting for %s", what)
		}
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
}

// UntilState checks until cond returns true and fails tb once timeout has
// passed, saying what it waited for and the state cond last described
// (e.g. "phase Pending on node-1").
func UntilState(tb testing.TB, timeout time.Duration, what string, cond func() (ok bool, state string)) {
	tb.Helper()
	Until(tb, timeout, func() error {
		if ok, state := cond(); !ok {
			return fmt.Errorf("waiting for %s; last state: %s", what, state)
		}
		return nil
	})
}

// Holds checks for the whole of d that check keeps returning nil and fails
// tb with check's first error. It is how a test shows that something does
// not happen (no write, no deletion) within a window.
func Holds(tb testing.TB, d time.Duration, check func() error) {
	tb.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(tb.Context(), d)
	defer cancel()
	ticker := time.NewTicker(Interval)
	defer ticker.Stop()
	for {
		if err := check(); err != nil {
			tb.Fatalf("no longer so after %s: %v", time.Since(start).Round(time.Millisecond), err)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// Settled waits until value has not changed for quiet and returns it; it
// fails tb, saying what it waited for, when value still changes after
// timeout. It is how a test waits for a controller to go quiet (a count of
// reconciles or requests that stops growing).
func Settled[T comparable](tb testing.TB, timeout, quiet time.Duration, what string, value func() T) T {
	tb.Helper()
	last, since := value(), time.Now()
	Until(tb, timeout, func() error {
		if v := value(); v != last {
			last, since = v, time.Now()
		}
		if time.Since(since) < quiet {
			return fmt.Errorf("waiting for %s to stay unchanged for %s; last %v", what, quiet, last)
		}
		return nil
	})
	return last
}
