package envtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Shared is a control plane the tests of one package share: the first test
// that asks for it starts it, Main stops it after the last test. A package
// whose selected tests (go test -run) need none starts none.
type Shared struct {
	opts  []Option
	ready func(*Env) error

	once sync.Once
	env  *Env
	err  error
}

// NewShared describes a shared control plane started with opts. ready, when
// not nil, runs once right after the start (e.g. to build the package's
// clients); its error fails every test that asks for the control plane.
func NewShared(ready func(*Env) error, opts ...Option) *Shared {
	return &Shared{opts: opts, ready: ready}
}

// Env returns the control plane, starting it on first use. It skips tb when
// SKIP_ENVTEST=true and fails it when the control plane did not start.
func (s *Shared) Env(tb testing.TB) *Env {
	tb.Helper()
	s.once.Do(func() {
		// Not tb's context: the control plane outlives the first test.
		s.env, s.err = New(context.Background(), s.opts...)
		if s.err == nil && s.ready != nil {
			s.err = s.ready(s.env)
		}
	})
	if errors.Is(s.err, ErrSkipped) {
		tb.Skip(s.err.Error())
	}
	if s.err != nil {
		tb.Fatalf("failed to start the package's shared envtest: %v", s.err)
	}
	return s.env
}

// stop stops the control plane if a test started it.
func (s *Shared) stop() error {
	if s.env == nil {
		return nil
	}
	return s.env.Stop()
}

// Main is the TestMain of a package whose tests start control planes: it
// runs the tests, then stops every one of shared that a test started, so
// the package leaves no process behind, and exits with the tests' result
// (failed also when a control plane does not stop cleanly).
//
// First it sets controller-runtime's global logger to one that discards:
// controller-runtime's envtest, managers and caches log through it, and
// while it is unset for 30 s, controller-runtime prints a stack trace into
// the test output. The first logger set stays, so a package whose tests
// want those lines sets its own in an init function.
func Main(m *testing.M, shared ...*Shared) {
	ctrllog.SetLogger(logr.Discard())
	code := m.Run()
	for _, s := range shared {
		if err := s.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "failed to stop envtest: %v\n", err)
			code = max(code, 1)
		}
	}
	os.Exit(code)
}
