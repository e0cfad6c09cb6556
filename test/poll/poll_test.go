package poll

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestWaitReturnsOnceTheCheckHolds(t *testing.T) {
	calls := 0
	err := Wait(t.Context(), time.Minute, func() error {
		calls++
		if calls < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("Wait = %v after %d checks, want nil after 3", err, calls)
	}
}

func TestWaitReportsTheLastErrorAfterTheTimeout(t *testing.T) {
	calls := 0
	start := time.Now()
	err := Wait(t.Context(), 200*time.Millisecond, func() error {
		calls++
		return errors.New("phase Pending")
	})
	if err == nil || !strings.Contains(err.Error(), "phase Pending") || !strings.Contains(err.Error(), "200ms") {
		t.Fatalf("Wait = %v, want the last error and the timeout", err)
	}
	if elapsed := time.Since(start); elapsed < 200*time.Millisecond || calls < 2 {
		t.Errorf("gave up after %s and %d checks", elapsed, calls)
	}
}

func TestWaitEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := Wait(ctx, time.Hour, func() error { return errors.New("phase Pending") })
	if err == nil || !strings.Contains(err.Error(), "cancelled") || !strings.Contains(err.Error(), "phase Pending") {
		t.Fatalf("Wait with an ended context = %v, want the cancellation and the last error", err)
	}
}

func TestUntilTrue(t *testing.T) {
	calls := 0
	UntilTrue(t, time.Minute, "the third check", func() (bool, error) {
		calls++
		return calls == 3, nil
	})
	if calls != 3 {
		t.Errorf("UntilTrue returned after %d checks, want 3", calls)
	}
}
