// Package golden compares what a test produced with a file checked into the
// repository, or rewrites the file from it. Every golden test of the
// repository goes through Check, so one flag means the same everywhere:
//
//	go test ./cmd/kubevirt-installer -update
//
// A test binary that does not import this package refuses the flag, so
// name the packages whose golden files should be rewritten.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// maxDiffLines bounds the diff a failure prints: generated files run to
// thousands of lines, and the first differences are what a reader needs.
const maxDiffLines = 80

var update = flag.Bool("update", false, "rewrite the golden files from the current output instead of comparing with them")

// Updating reports whether the test binary runs with -update.
func Updating() bool { return *update }

// Check compares got with the file at path. With -update it writes got to
// path instead, creating its directory. A missing or different file is a
// test error naming the file and how to rewrite it; the test goes on, so
// one run reports every differing file.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatalf("failed to create the directory of %s: %v", path, err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil { //nolint:gosec // golden files are checked in, world-readable
			t.Fatalf("failed to write %s: %v", path, err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("failed to read golden file %s (run the test with -update to create it): %v", path, err)
		return
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got); run the test with -update if the change is intended:\n%s", path, firstLines(diff, maxDiffLines))
	}
}

// firstLines returns the first n lines of s, saying how many it left out.
func firstLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "") + "... (" + strconv.Itoa(len(lines)-n) + " more lines)\n"
}
