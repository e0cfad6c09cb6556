package envtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// binarySet is a directory of executables built once and cached: the
// environment variable naming it, or else the script that builds it (a no-op
// when cached) and prints it.
type binarySet struct {
	env    string
	script string
	names  []string
}

var (
	// controlPlaneBinaries are etcd, kube-apiserver,
	// kube-controller-manager and kube-scheduler; KUBEBUILDER_ASSETS as in
	// controller-runtime's envtest.
	controlPlaneBinaries = binarySet{
		env:    "KUBEBUILDER_ASSETS",
		script: "hack/envtest-binaries.sh",
		names:  []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"},
	}
	// upstreamBinaries are KubeVirt's and CDI's own code (test/upstream).
	upstreamBinaries = binarySet{
		env:    "UPSTREAM_BINARIES",
		script: "hack/upstream-binaries.sh",
		names:  []string{KubeVirtTool, VirtController, CDITool, CDIController},
	}
)

// Upstream binaries, built from the tool modules under test/upstream.
const (
	// KubeVirtTool prints KubeVirt's generated manifests and serves virt-api's
	// admission webhooks.
	KubeVirtTool = "kubevirt-upstream"
	// VirtController is KubeVirt's virt-controller.
	VirtController = "virt-controller"
	// CDITool prints CDI's generated manifests.
	CDITool = "cdi-upstream"
	// CDIController is CDI's cdi-controller.
	CDIController = "cdi-controller"
)

// built remembers the directory of each set found in this process, so the
// script runs once per process.
var built sync.Map

// dir returns the directory of the set: the one its environment variable
// names, else the one its script prints. The script's own progress lines
// (not the go tool's) go to progress when it is not nil.
func (b binarySet) dir(ctx context.Context, progress io.Writer) (string, error) {
	if dir := os.Getenv(b.env); dir != "" {
		return dir, b.check(dir)
	}
	if dir, ok := built.Load(b.script); ok {
		return dir.(string), nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	script := filepath.Join(root, b.script)
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Dir = root
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if progress != nil {
		cmd.Stderr = io.MultiWriter(&stderr, &progressLines{out: progress, prefix: strings.TrimSuffix(filepath.Base(b.script), ".sh") + ":"})
	}
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("failed to run %s: %w: %s", script, err, lastLines(stderr.String(), 20))
	}
	dir := lastLine(stdout.String())
	if dir == "" {
		return "", fmt.Errorf("%s printed no directory", script)
	}
	if err := b.check(dir); err != nil {
		return "", err
	}
	built.Store(b.script, dir)
	return dir, nil
}

// progressLines passes on the complete lines written to it that start with
// prefix.
type progressLines struct {
	out     io.Writer
	prefix  string
	partial []byte
}

func (p *progressLines) Write(b []byte) (int, error) {
	p.partial = append(p.partial, b...)
	for {
		line, rest, ok := bytes.Cut(p.partial, []byte("\n"))
		if !ok {
			return len(b), nil
		}
		if bytes.HasPrefix(line, []byte(p.prefix)) {
			if _, err := fmt.Fprintf(p.out, "    %s\n", line); err != nil {
				return 0, err
			}
		}
		p.partial = rest
	}
}

// check reports which expected binary is missing from dir.
func (b binarySet) check(dir string) error {
	for _, name := range b.names {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("failed to find binary %s (%s): %w", name, b.env, err)
		}
		if info.Mode()&0o111 == 0 {
			return fmt.Errorf("binary %s in %s is not executable", name, dir)
		}
	}
	return nil
}

// UpstreamDir returns the directory holding KubeVirtTool, VirtController,
// CDITool and CDIController: UPSTREAM_BINARIES, else what
// hack/upstream-binaries.sh builds (minutes on a cold cache, then cached).
func UpstreamDir(ctx context.Context) (string, error) {
	return upstreamBinaries.dir(ctx, nil)
}

// BinaryDirs builds (or finds) the control-plane and upstream binaries and
// returns their directories by the environment variable that names each
// (KUBEBUILDER_ASSETS, UPSTREAM_BINARIES), e.g. to hand them to a process
// that must not build them itself.
func BinaryDirs(ctx context.Context) (map[string]string, error) {
	dirs := map[string]string{}
	for _, b := range []binarySet{controlPlaneBinaries, upstreamBinaries} {
		dir, err := b.dir(ctx, nil)
		if err != nil {
			return nil, err
		}
		dirs[b.env] = dir
	}
	return dirs, nil
}

// BuildBinaries builds (or finds) the control-plane and upstream binaries
// ahead of New, writing the build scripts' progress lines to progress: the
// first build takes many minutes, which a person waiting should see.
func BuildBinaries(ctx context.Context, progress io.Writer) error {
	for _, b := range []binarySet{controlPlaneBinaries, upstreamBinaries} {
		if _, err := b.dir(ctx, progress); err != nil {
			return err
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
