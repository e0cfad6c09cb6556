package kubevirt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// testEnv is the control plane most tests share as both infra and user
// cluster, with the garbage collector and KubeVirt's admission running; nil
// when SKIP_ENVTEST=true.
var testEnv *envtest.Env

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	env, err := envtest.New(context.Background(), envtest.WithControllerManager(), envtest.WithKubeVirt())
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
func sharedEnv(tb testing.TB) *envtest.Env {
	tb.Helper()
	if testEnv == nil {
		tb.Skip("envtest skipped")
	}
	return testEnv
}
