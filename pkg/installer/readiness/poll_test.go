package readiness

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	clocktesting "k8s.io/utils/clock/testing"
)

// stepUntilDone advances clk by interval whenever the poller waits on it,
// until done is closed.
func stepUntilDone(clk *clocktesting.FakeClock, interval time.Duration, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		default:
		}
		if clk.HasWaiters() {
			clk.Step(interval)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestUntilTimesOutOnTheInjectedClock(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	p := Poller{Clock: clk, Interval: time.Second, Timeout: 5 * time.Second}
	polls := 0
	var reported []string
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		err = p.Until(t.Context(), "the thing", func(context.Context) (bool, string, error) {
			polls++
			return false, fmt.Sprintf("state %d", min(polls, 2)), nil
		}, func(msg string) { reported = append(reported, msg) })
	}()
	stepUntilDone(clk, time.Second, done)
	var timeout *TimeoutError
	if !errors.As(err, &timeout) {
		t.Fatalf("got %v, want a timeout", err)
	}
	if diff := cmp.Diff(&TimeoutError{What: "the thing", Waited: 5 * time.Second, Last: "state 2"}, timeout); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if polls != 6 {
		t.Errorf("polled %d times in 5s at 1s, want 6", polls)
	}
	if diff := cmp.Diff([]string{"state 1", "state 2"}, reported); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
}

func TestUntilStopsOnDoneAndOnError(t *testing.T) {
	p := Poller{Interval: time.Millisecond, Timeout: time.Minute}
	n := 0
	err := p.Until(t.Context(), "x", func(context.Context) (bool, string, error) {
		n++
		return n == 3, "", nil
	}, nil)
	if err != nil || n != 3 {
		t.Errorf("err %v after %d polls", err, n)
	}
	boom := errors.New("boom")
	if err := p.Until(t.Context(), "x", func(context.Context) (bool, string, error) { return false, "", boom }, nil); !errors.Is(err, boom) {
		t.Errorf("got %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := p.Until(ctx, "x", func(context.Context) (bool, string, error) { return false, "", nil }, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v", err)
	}
}
