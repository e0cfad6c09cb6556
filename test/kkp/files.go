package kkp

import (
	"fmt"
	"os"
	"path/filepath"
)

// WithAddress returns args with the value of flag replaced by address:
// Kubermatic's fixed ports (a pod's own) would collide on one machine.
func WithAddress(args []string, flag, address string) []string {
	out := append([]string(nil), args...)
	for i := range out[:len(out)-1] {
		if out[i] == flag {
			out[i+1] = address
		}
	}
	return out
}

// WriteFiles writes files (name → content) into dir readable by UID, as
// Kubermatic mounts them into the pods, and makes dir and its parents up
// to the temporary directory reachable by UID.
func WriteFiles(dir string, files map[string][]byte) error {
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil { //nolint:gosec // read by the processes' uid
			return fmt.Errorf("failed to write %s: %w", name, err)
		}
	}
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil { //nolint:gosec // the processes' uid must reach the files
			return fmt.Errorf("failed to open %s to uid %d: %w", d, UID, err)
		}
	}
	return nil
}
