package envtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

const (
	// kcmStartGrace is how long the controller manager must stay up after
	// its start to count as started; flag or kubeconfig errors end it sooner.
	kcmStartGrace = time.Second
	// kcmStopTimeout bounds the wait for a graceful exit after SIGTERM.
	kcmStopTimeout = 10 * time.Second
)

// controllerManager is a running kube-controller-manager process.
type controllerManager struct {
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
	logPath string
}

// startControllerManager starts kube-controller-manager from dir with only
// the garbage collector and the namespace controller, talking to the API
// server through the admin kubeconfig file. Its output goes to a log file in
// workDir.
func startControllerManager(dir, kubeconfigPath, workDir string) (*controllerManager, error) {
	logPath := filepath.Join(workDir, "kube-controller-manager.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("failed to create the controller manager log: %w", err)
	}
	defer func() { _ = logFile.Close() }() // the child process holds its own descriptor

	// The process must outlive the call that started it, so it is not tied
	// to any request context; stop() ends it.
	cmd := exec.Command(filepath.Join(dir, "kube-controller-manager"), //nolint:noctx // lives until stop()
		"--kubeconfig="+kubeconfigPath,
		"--controllers=garbagecollector,namespace",
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		"--secure-port=0",
	)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("failed to start kube-controller-manager: %w", err)
	}
	kcm := &controllerManager{cmd: cmd, done: make(chan struct{}), logPath: logPath}
	go func() {
		kcm.waitErr = cmd.Wait()
		close(kcm.done)
	}()

	select {
	case <-kcm.done:
		return nil, fmt.Errorf("kube-controller-manager exited at start (%w): %s", kcm.waitErr, kcm.logTail())
	case <-time.After(kcmStartGrace):
		return kcm, nil
	}
}

// stop ends the process, gracefully if it lets itself.
func (k *controllerManager) stop() error {
	select {
	case <-k.done:
		return nil
	default:
	}
	if err := k.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("failed to signal kube-controller-manager: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), kcmStopTimeout)
	defer cancel()
	select {
	case <-k.done:
		return nil
	case <-ctx.Done():
		if err := k.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("failed to kill kube-controller-manager: %w", err)
		}
		<-k.done
		return nil
	}
}

// logTail returns the end of the process log for error messages.
func (k *controllerManager) logTail() string {
	out, err := os.ReadFile(k.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return lastLines(string(out), 20)
}
