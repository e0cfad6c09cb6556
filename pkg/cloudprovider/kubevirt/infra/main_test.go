package infra

import (
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// controlPlane is the control plane the tests of this package share,
// started by the first test that asks for it (sharedEnv).
var controlPlane = envtest.NewShared(nil)

func TestMain(m *testing.M) { envtest.Main(m, controlPlane) }

// sharedEnv returns the package's control plane, starting it on first use;
// it skips the test when SKIP_ENVTEST=true.
func sharedEnv(t *testing.T) *envtest.Env {
	t.Helper()
	return controlPlane.Env(t)
}
