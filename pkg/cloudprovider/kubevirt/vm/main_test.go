package vm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// kubeVirt is the control plane with KubeVirt's admission and
// virt-controller that the tests needing one share. The first of them
// starts it, so the pure tests of the package run without it; TestMain
// stops it.
var kubeVirt struct {
	once sync.Once
	env  *envtest.Env
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if kubeVirt.env != nil {
		if err := kubeVirt.env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "failed to stop envtest: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// kubeVirtEnv returns the shared control plane, starting it on first use;
// it skips the test when SKIP_ENVTEST=true.
func kubeVirtEnv(tb testing.TB) *envtest.Env {
	tb.Helper()
	kubeVirt.once.Do(func() {
		kubeVirt.env, kubeVirt.err = envtest.New(context.Background(), envtest.WithVirtController())
	})
	if errors.Is(kubeVirt.err, envtest.ErrSkipped) {
		tb.Skip(kubeVirt.err.Error())
	}
	if kubeVirt.err != nil {
		tb.Fatalf("failed to start envtest: %v", kubeVirt.err)
	}
	return kubeVirt.env
}
