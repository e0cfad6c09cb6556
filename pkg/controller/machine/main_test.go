package machine

import (
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// TestMain stops nothing shared; envtest.Main sets controller-runtime's
// logger, which the package's control planes log through.
func TestMain(m *testing.M) { envtest.Main(m) }
