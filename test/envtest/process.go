package envtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// processStopTimeout bounds the wait for a graceful exit after SIGTERM.
const processStopTimeout = 10 * time.Second

// process is a program the control plane runs beside the API server
// (kube-controller-manager, KubeVirt's and CDI's components). It is a child
// of the test process that dies with it: its own process group, and SIGKILL
// when the test process ends without stopping it.
type process struct {
	name    string
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
	logPath string
}

// processSpec describes how to start a process.
type processSpec struct {
	name string   // for messages and the log file name
	path string   // the executable
	args []string // its arguments
	env  []string // added to the test process's environment
	// wrap, when set, runs the executable through another program (e.g.
	// unshare); its arguments come first.
	wrap []string
	// ready, when set, is called with each line of the process's stdout
	// until it returns true; start returns then. Without it start waits
	// startGrace for an early exit.
	ready      func(line string) bool
	startGrace time.Duration
}

// startProcess starts spec with its output in a log file in workDir.
func startProcess(ctx context.Context, spec processSpec, workDir string) (*process, error) {
	logPath := filepath.Join(workDir, spec.name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("failed to create the %s log: %w", spec.name, err)
	}
	defer func() { _ = logFile.Close() }() // the child process holds its own descriptor

	argv := append(append(append([]string{}, spec.wrap...), spec.path), spec.args...)
	// The process must outlive the call that started it, so it is not tied
	// to ctx; stop() ends it.
	cmd := exec.Command(argv[0], argv[1:]...) //nolint:gosec,noctx // the test's own binaries; lives until stop()
	cmd.Env = append(os.Environ(), spec.env...)
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var stdout io.ReadCloser
	if spec.ready != nil {
		if stdout, err = cmd.StdoutPipe(); err != nil {
			return nil, fmt.Errorf("failed to read the output of %s: %w", spec.name, err)
		}
	} else {
		cmd.Stdout = logFile
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("failed to start %s: %w", spec.name, err)
	}
	p := &process{name: spec.name, cmd: cmd, done: make(chan struct{}), logPath: logPath}
	ready := make(chan struct{})
	if stdout != nil {
		go p.scan(stdout, logFile, spec.ready, ready)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	if stdout == nil {
		select {
		case <-p.done:
			return nil, fmt.Errorf("%s exited at start (%w): %s", spec.name, p.waitErr, p.logTail())
		case <-time.After(spec.startGrace):
			return p, nil
		}
	}
	select {
	case <-ready:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("%s exited at start (%w): %s", spec.name, p.waitErr, p.logTail())
	case <-ctx.Done():
		return nil, errors.Join(fmt.Errorf("%s did not get ready: %w: %s", spec.name, ctx.Err(), p.logTail()), p.stop())
	}
}

// scan copies stdout to the log and closes ready at the first line ready
// accepts.
func (p *process) scan(stdout io.Reader, log io.Writer, accept func(string) bool, ready chan struct{}) {
	sc := bufio.NewScanner(stdout)
	signalled := false
	for sc.Scan() {
		line := sc.Text()
		_, _ = fmt.Fprintln(log, line)
		if !signalled && accept(line) {
			close(ready)
			signalled = true
		}
	}
}

// stop ends the process, gracefully if it lets itself.
func (p *process) stop() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("failed to signal %s: %w", p.name, err)
	}
	timer := time.NewTimer(processStopTimeout)
	defer timer.Stop()
	select {
	case <-p.done:
		return nil
	case <-timer.C:
		// The whole group: a wrapper's child goes too.
		if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("failed to kill %s: %w", p.name, err)
		}
		<-p.done
		return nil
	}
}

// logTail returns the end of the process log for error messages.
func (p *process) logTail() string {
	out, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return lastLines(string(out), 20)
}

// exitedEarly reports an error when the process has ended although it
// should still run.
func (p *process) exitedEarly() error {
	select {
	case <-p.done:
		if p.waitErr == nil {
			return fmt.Errorf("%s exited with status 0: %s", p.name, strings.TrimSpace(p.logTail()))
		}
		return fmt.Errorf("%s exited (%w): %s", p.name, p.waitErr, strings.TrimSpace(p.logTail()))
	default:
		return nil
	}
}
