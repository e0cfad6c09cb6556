package gobuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinary builds a command twice and runs it: both copies are whole,
// runnable and the same.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a command")
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	Binary(t, MachineController, a)
	Binary(t, MachineController, b)
	out, err := exec.CommandContext(t.Context(), a, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), " version ") {
		t.Fatalf("the built binary printed %q, %v; want its version", out, err)
	}
	ra, err := os.ReadFile(a) //nolint:gosec // the test's file
	if err != nil {
		t.Fatal(err)
	}
	rb, err := os.ReadFile(b) //nolint:gosec // the test's file
	if err != nil {
		t.Fatal(err)
	}
	if string(ra) != string(rb) {
		t.Error("two builds of the same command differ")
	}
}
