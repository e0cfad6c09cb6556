package main

import (
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// TestMain gives controller-runtime a logger before a test logs through it
// (it prints a stack trace otherwise), as main does through openLog.
func TestMain(m *testing.M) { envtest.Main(m) }
