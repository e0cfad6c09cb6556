package readiness

import (
	"context"
	"fmt"
	"time"

	"k8s.io/utils/clock"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// Defaults of a zero Poller.
const (
	DefaultInterval = 2 * time.Second
	DefaultTimeout  = 10 * time.Minute
)

// Poller polls conditions at an interval until they hold or a timeout
// passes, on an injectable clock.
type Poller struct {
	// Clock measures the interval and the timeout; nil is the real clock.
	Clock clock.WithTicker
	// Interval is the time between polls; zero is DefaultInterval.
	Interval time.Duration
	// Timeout bounds one wait; zero is DefaultTimeout.
	Timeout time.Duration
}

// TimeoutError is returned when a wait times out; it carries the last
// observed state.
type TimeoutError struct {
	// What names what was waited for.
	What string
	// Waited is the timeout.
	Waited time.Duration
	// Last is the last message of the condition.
	Last string
}

// Error implements error.
func (e *TimeoutError) Error() string {
	return fmt.Sprintf("timed out after %s waiting for %s: %s", e.Waited, e.What, e.Last)
}

// Condition is polled by Until: done ends the wait, message describes the
// current state, an error ends the wait with that error.
type Condition func(ctx context.Context) (done bool, message string, err error)

func (p Poller) clock() clock.WithTicker {
	if p.Clock == nil {
		return clock.RealClock{}
	}
	return p.Clock
}

func (p Poller) interval() time.Duration {
	if p.Interval <= 0 {
		return DefaultInterval
	}
	return p.Interval
}

// TimeoutOrDefault is the effective timeout.
func (p Poller) TimeoutOrDefault() time.Duration {
	if p.Timeout <= 0 {
		return DefaultTimeout
	}
	return p.Timeout
}

// Until polls cond until it is done, fails, the context ends or the timeout
// passes. report, if not nil, receives every message that differs from the
// previous one.
func (p Poller) Until(ctx context.Context, what string, cond Condition, report func(message string)) error {
	clk := p.clock()
	start := clk.Now()
	ticker := clk.NewTicker(p.interval())
	defer ticker.Stop()
	last := ""
	for {
		done, msg, err := cond(ctx)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		if msg != last && report != nil {
			report(msg)
		}
		last = msg
		if clk.Since(start) >= p.TimeoutOrDefault() {
			return &TimeoutError{What: what, Waited: p.TimeoutOrDefault(), Last: msg}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("stopped waiting for %s: %w", what, ctx.Err())
		case <-ticker.C():
		}
	}
}

// Wait polls the checks until all are ready. report, if not nil, receives a
// check's result whenever its message changes. Read errors do not end the
// wait (the API server may be briefly unavailable); they are reported and
// end up in the timeout error.
func (p Poller) Wait(ctx context.Context, c ctrlruntimeclient.Reader, checks []Check, report func(Check, Result)) error {
	last := make([]string, len(checks))
	cond := func(ctx context.Context) (bool, string, error) {
		pending := ""
		for i, check := range checks {
			res, err := check.Evaluate(ctx, c)
			if err != nil {
				res = Result{Message: err.Error()}
			}
			if res.Message != last[i] && report != nil {
				report(check, res)
			}
			last[i] = res.Message
			if !res.Ready && pending == "" {
				pending = check.Object() + ": " + res.Message
			}
		}
		return pending == "", pending, nil
	}
	return p.Until(ctx, "readiness", cond, nil)
}
