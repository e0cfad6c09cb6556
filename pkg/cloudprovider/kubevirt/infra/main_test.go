package infra

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// testEnv is the control plane shared by the tests of this package; nil when
// SKIP_ENVTEST=true.
var testEnv *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	env, err := envtest.New(context.Background())
	switch {
	case errors.Is(err, envtest.ErrSkipped):
	case err != nil:
		fmt.Fprintf(os.Stderr, "failed to start envtest: %v\n", err)
		return 1
	default:
		testEnv = env
		defer func() {
			if err := env.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "failed to stop envtest: %v\n", err)
			}
		}()
	}
	return m.Run()
}

// sharedEnv returns the package's control plane or skips the test.
func sharedEnv(t *testing.T) *envtest.Env {
	t.Helper()
	if testEnv == nil {
		t.Skip("envtest skipped")
	}
	return testEnv
}
