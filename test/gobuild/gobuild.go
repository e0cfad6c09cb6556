// Package gobuild builds this module's commands for tests that run them as
// processes.
package gobuild

import (
	"os/exec"
	"testing"
)

// MachineController is the import path of the machine-controller command,
// which four test packages run.
const MachineController = "github.com/kubevirt-kkp/kkp-kubevirt/cmd/machine-controller"

// Binary builds the main package pkg (an import path) into dest. It goes
// through the go command's cache of linked executables: `go run -exec cp
// pkg dest` links the program once per content and machine and then only
// copies it, where `go build -o` links it every time (machine-controller:
// 21 CPU-seconds and half a minute on a busy 2-core machine, four test
// packages build it).
func Binary(tb testing.TB, pkg, dest string) {
	tb.Helper()
	cmd := exec.CommandContext(tb.Context(), "go", "run", "-exec", "cp", pkg, dest) //nolint:gosec // builds this module's command
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("failed to build %s: %v\n%s", pkg, err, out)
	}
}
