package envtest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// recorder records the failures of a test run by RunInBackground.
type recorder struct {
	testing.TB
	errors   []string
	cleanups []func()
}

func (r *recorder) Errorf(format string, args ...any) { r.errors = append(r.errors, format) }
func (r *recorder) Cleanup(f func())                  { r.cleanups = append(r.cleanups, f) }

// TestRunInBackground: Stop ends the context and waits; the function's
// error fails the test; Done is closed when the function gives up early;
// the cleanup stops what the test did not.
func TestRunInBackground(t *testing.T) {
	t.Run("stop waits and reports the error", func(t *testing.T) {
		r := &recorder{TB: t}
		returned := false
		b := envtest.RunInBackground(r, "manager", func(ctx context.Context) error {
			<-ctx.Done()
			returned = true
			return errors.New("failed")
		})
		b.Stop()
		b.Stop()
		if !returned || len(r.errors) != 1 {
			t.Errorf("returned %v, errors %v; want the function returned and one error", returned, r.errors)
		}
	})
	t.Run("done when the function gives up", func(t *testing.T) {
		r := &recorder{TB: t}
		b := envtest.RunInBackground(r, "reader", func(context.Context) error { return nil })
		<-b.Done()
		for _, f := range r.cleanups {
			f()
		}
		if len(r.errors) != 0 {
			t.Errorf("errors %v for a function that returned nil", r.errors)
		}
	})
	t.Run("the cleanup stops it", func(t *testing.T) {
		r := &recorder{TB: t}
		b := envtest.RunInBackground(r, "cache", func(ctx context.Context) error { <-ctx.Done(); return nil })
		for _, f := range r.cleanups {
			f()
		}
		select {
		case <-b.Done():
		default:
			t.Error("the cleanup did not stop the function")
		}
	})
}
