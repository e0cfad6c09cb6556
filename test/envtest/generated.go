package envtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// generatedDir is where, beside the upstream binaries, their printed
// objects are kept.
const generatedDir = ".generated"

// generatedOutputs holds what this process's upstream tool runs printed.
var generatedOutputs sync.Map // key → []byte

// generated returns what the tool at path prints for args. What it prints
// depends only on the binary and the arguments, and KubeVirt's tool spends
// 3.7 s (4 CPU-seconds) initialising before it prints anything, five times
// per KubeVirt control plane and once more per simulated node; so the
// output is kept in this process and in a file beside the binary (keyed by
// the binary's size and modification time and the arguments), and the tool
// runs once per binary and arguments on the machine. A file that cannot be
// written only costs the next process a run.
func generated(ctx context.Context, path string, args []string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("failed to find %s: %w", path, err)
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d\x00%s", filepath.Base(path), info.Size(), info.ModTime().UnixNano(), strings.Join(args, "\x00")))
	key := hex.EncodeToString(sum[:16])
	if out, ok := generatedOutputs.Load(key); ok {
		return out.([]byte), nil
	}
	file := filepath.Join(filepath.Dir(path), generatedDir, key+".json")
	if out, err := os.ReadFile(file); err == nil { //nolint:gosec // the cache beside the binaries
		generatedOutputs.Store(key, out)
		return out, nil
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("failed to run %s %s: %w: %s", filepath.Base(path), strings.Join(args, " "), err, lastLines(stderr.String(), 10))
	}
	out := stdout.Bytes()
	generatedOutputs.Store(key, out)
	keep(file, out)
	return out, nil
}

// keep writes out to file through a temporary file and a rename, so that a
// reader never sees part of it; it gives up silently.
func keep(file string, out []byte) {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil { //nolint:gosec // read by whoever runs the binaries
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "tmp-")
	if err != nil {
		return
	}
	_, werr := tmp.Write(out)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Chmod(tmp.Name(), 0o644) != nil || os.Rename(tmp.Name(), file) != nil {
		_ = os.Remove(tmp.Name())
	}
}
