package vm

import (
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// kubeVirt is the control plane with KubeVirt's admission and
// virt-controller that the tests needing one share. The first of them
// starts it, so the pure tests of the package run without it.
var kubeVirt = envtest.NewShared(nil, envtest.WithVirtController())

func TestMain(m *testing.M) { envtest.Main(m, kubeVirt) }

// kubeVirtEnv returns the shared control plane, starting it on first use;
// it skips the test when SKIP_ENVTEST=true.
func kubeVirtEnv(tb testing.TB) *envtest.Env {
	tb.Helper()
	return kubeVirt.Env(tb)
}
