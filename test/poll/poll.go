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
// long it waited. It is the variant of Until for code without a
// testing.TB, such as a benchmark harness.
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
	var failed error
	Until(tb, timeout, func() error {
		ok, err := cond()
		switch {
		case err != nil:
			failed = err
			return nil
		case !ok:
			return fmt.Errorf("waiting for %s", what)
		}
		return nil
	})
	if failed != nil {
		tb.Fatalf("waiting for %s: %v", what, failed)
	}
}
