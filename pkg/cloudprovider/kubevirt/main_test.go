package kubevirt

import (
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// testEnv is the control plane most tests share as both infra and user
// cluster, with the garbage collector and KubeVirt's admission running.
var testEnv = envtest.NewShared(nil, envtest.WithControllerManager(), envtest.WithKubeVirt())

func TestMain(m *testing.M) { envtest.Main(m, testEnv) }

// sharedEnv returns the package's control plane, starting it on first use,
// or skips the test when SKIP_ENVTEST=true.
func sharedEnv(tb testing.TB) *envtest.Env {
	tb.Helper()
	return testEnv.Env(tb)
}
