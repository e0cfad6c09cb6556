package envtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
)

// pdeathsigTool sets a parent-death signal and then runs a program (from
// util-linux). controller-runtime's envtest starts etcd and kube-apiserver
// itself, in process groups of their own and without a parent-death
// signal, and offers no hook into how it starts them; only their paths are
// ours. So each path is a script that runs the binary through this tool.
const pdeathsigTool = "setpriv"

// dieWithProcess makes etcd and kube-apiserver get SIGKILL when this
// process ends without stopping them (a crash, SIGKILL, a second Ctrl-C),
// like the processes startProcess starts. Without setpriv they start
// directly and outlive such an end.
func (e *Env) dieWithProcess(binDir string) error {
	tool, err := exec.LookPath(pdeathsigTool)
	if errors.Is(err, exec.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to look for %s: %w", pdeathsigTool, err)
	}
	dir := filepath.Join(e.workDir, "bin")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("failed to create %s: %w", dir, err)
	}
	paths := map[string]*string{}
	e.env.ControlPlane.Etcd = &crenvtest.Etcd{}
	paths["etcd"] = &e.env.ControlPlane.Etcd.Path
	paths["kube-apiserver"] = &e.env.ControlPlane.GetAPIServer().Path
	for name, path := range paths {
		script := filepath.Join(dir, name)
		if err := os.WriteFile(script, []byte(pdeathsigScript(tool, filepath.Join(binDir, name))), 0o700); err != nil { //nolint:gosec // an executable of our own
			return fmt.Errorf("failed to write the %s wrapper: %w", name, err)
		}
		*path = script
	}
	return nil
}

// pdeathsigScript is a shell script that runs binary with its arguments and
// SIGKILL as its parent-death signal. exec keeps the process ID, so the
// started process is the binary itself: envtest's SIGTERM reaches it, and
// the parent whose death counts is the one that started the script.
func pdeathsigScript(tool, binary string) string {
	return "#!/bin/sh\nexec " + shellQuote(tool) + " --pdeathsig KILL -- " + shellQuote(binary) + ` "$@"` + "\n"
}

// shellQuote quotes s as one word for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
