package simulator_test

import (
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

func TestMain(m *testing.M) { envtest.Main(m) }
