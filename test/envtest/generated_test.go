package envtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedRunsTheToolOnce runs a tool that counts its runs: the second
// call in this process, and one in another process (a fresh in-process
// cache), take its output from the cache; other arguments or a rebuilt
// binary run it again.
func TestGeneratedRunsTheToolOnce(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	tool := filepath.Join(dir, "tool")
	script := "#!/bin/sh\necho run >> " + runs + "\necho \"$@\"\n"
	if err := os.WriteFile(tool, []byte(script), 0o755); err != nil { //nolint:gosec // an executable
		t.Fatal(err)
	}
	count := func() int {
		b, _ := os.ReadFile(runs) //nolint:gosec // the test's file
		return strings.Count(string(b), "run")
	}
	call := func(args ...string) string {
		t.Helper()
		out, err := generated(t.Context(), tool, args)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	if got := call("a", "b"); got != "a b\n" {
		t.Fatalf("output %q, want %q", got, "a b\n")
	}
	call("a", "b")
	generatedOutputs.Clear() // another process
	if got := call("a", "b"); got != "a b\n" || count() != 1 {
		t.Errorf("after three calls with the same arguments: output %q, %d runs, want %q and 1 run", got, count(), "a b\n")
	}
	if got := call("a", "c"); got != "a c\n" || count() != 2 {
		t.Errorf("other arguments: output %q, %d runs, want %q and 2 runs", got, count(), "a c\n")
	}
	if err := os.WriteFile(tool, []byte(script+"echo rebuilt\n"), 0o755); err != nil { //nolint:gosec // an executable
		t.Fatal(err)
	}
	if got := call("a", "b"); got != "a b\nrebuilt\n" || count() != 3 {
		t.Errorf("a rebuilt tool: output %q, %d runs, want its new output and 3 runs", got, count())
	}
}
