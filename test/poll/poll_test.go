package poll

import (
	"context"
	"errors"
	"fmt"
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

func TestHoldsChecksForTheWholeWindow(t *testing.T) {
	calls := 0
	start := time.Now()
	Holds(t, 200*time.Millisecond, func() error {
		calls++
		return nil
	})
	if elapsed := time.Since(start); elapsed < 200*time.Millisecond || calls < 3 {
		t.Errorf("Holds returned after %s and %d checks, want 200ms and several checks", elapsed, calls)
	}
}

func TestHoldsFailsAtTheFirstError(t *testing.T) {
	ft := &fatalRecorder{T: t}
	calls := 0
	func() {
		defer ft.recoverFatal()
		Holds(ft, time.Minute, func() error {
			calls++
			if calls == 2 {
				return errors.New("a write")
			}
			return nil
		})
	}()
	if calls != 2 || !strings.Contains(ft.msg, "a write") {
		t.Errorf("Holds failed with %q after %d checks, want the error of the second", ft.msg, calls)
	}
}

func TestSettledWaitsForQuiet(t *testing.T) {
	calls := 0
	start := time.Now()
	got := Settled(t, time.Minute, 200*time.Millisecond, "the count", func() int {
		calls++
		return min(calls, 5)
	})
	if got != 5 || time.Since(start) < 200*time.Millisecond {
		t.Errorf("Settled = %d after %s, want 5 after at least 200ms", got, time.Since(start))
	}
}

func TestSettledFailsWhileTheValueChanges(t *testing.T) {
	ft := &fatalRecorder{T: t}
	calls := 0
	func() {
		defer ft.recoverFatal()
		Settled(ft, 300*time.Millisecond, 200*time.Millisecond, "the count", func() int {
			calls++
			return calls
		})
	}()
	if !strings.Contains(ft.msg, "the count") || !strings.Contains(ft.msg, "300ms") {
		t.Errorf("Settled failed with %q, want what it waited for and the timeout", ft.msg)
	}
}

// fatalRecorder is a testing.TB whose Fatal records the message and ends
// the calling function instead of the test.
type fatalRecorder struct {
	*testing.T
	msg string
}

type fatalEnd struct{}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatal(args ...any) { f.msg = fmt.Sprint(args...); panic(fatalEnd{}) }

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(fatalEnd{})
}

func (f *fatalRecorder) recoverFatal() {
	if r := recover(); r != nil {
		if _, ok := r.(fatalEnd); !ok {
			panic(r)
		}
	}
}

func TestUntilStateReportsTheLastState(t *testing.T) {
	ft := &fatalRecorder{T: t}
	calls := 0
	func() {
		defer ft.recoverFatal()
		UntilState(ft, 200*time.Millisecond, "a running VMI", func() (bool, string) {
			calls++
			return false, fmt.Sprintf("phase Pending, check %d", calls)
		})
	}()
	want := fmt.Sprintf("waiting for a running VMI; last state: phase Pending, check %d", calls)
	if !strings.Contains(ft.msg, want) {
		t.Errorf("UntilState failed with %q, want it to contain %q", ft.msg, want)
	}
}

func TestWaitEndsAtAFinalError(t *testing.T) {
	calls := 0
	gone := errors.New("the process exited")
	err := Wait(t.Context(), time.Minute, func() error {
		calls++
		return Final(gone)
	})
	if !errors.Is(err, gone) || calls != 1 || strings.Contains(err.Error(), "after") {
		t.Fatalf("Wait = %v after %d checks, want the final error after one", err, calls)
	}
	if Final(nil) != nil {
		t.Error("Final(nil) is not nil")
	}
}

func TestUntilTrueEndsAtAnError(t *testing.T) {
	ft := &fatalRecorder{T: t}
	calls := 0
	func() {
		defer ft.recoverFatal()
		UntilTrue(ft, time.Minute, "the Machine", func() (bool, error) {
			calls++
			return false, errors.New("forbidden")
		})
	}()
	if calls != 1 || ft.msg != "waiting for the Machine: forbidden" {
		t.Errorf("UntilTrue failed with %q after %d checks, want the error after one", ft.msg, calls)
	}
}
