package envtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// assetsEnv names the directory holding etcd, kube-apiserver and
// kube-controller-manager, as in controller-runtime's envtest.
const assetsEnv = "KUBEBUILDER_ASSETS"

// binaryNames are the executables the directory must hold.
var binaryNames = []string{"etcd", "kube-apiserver", "kube-controller-manager"}

// binaryDir returns the directory with the control-plane binaries: the one
// KUBEBUILDER_ASSETS names, else the one hack/envtest-binaries.sh prints.
func binaryDir(ctx context.Context) (string, error) {
	if dir := os.Getenv(assetsEnv); dir != "" {
		return dir, checkBinaries(dir)
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	script := filepath.Join(root, "hack", "envtest-binaries.sh")
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir = root
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("failed to run %s: %w: %s", script, err, lastLines(stderr.String(), 20))
	}
	dir := lastLine(stdout.String())
	if dir == "" {
		return "", fmt.Errorf("%s printed no directory", script)
	}
	return dir, checkBinaries(dir)
}

// checkBinaries reports which expected binary is missing from dir.
func checkBinaries(dir string) error {
	for _, name := range binaryNames {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("failed to find envtest binary %s: %w", name, err)
		}
		if info.Mode()&0o111 == 0 {
			return fmt.Errorf("envtest binary %s in %s is not executable", name, dir)
		}
	}
	return nil
}

// repoRoot walks up from the working directory to the directory holding
// go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("failed to get the working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("failed to look for go.mod in %s: %w", dir, err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("failed to find the repository root: no go.mod above the working directory")
		}
		dir = parent
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
