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
	"sync"
	"syscall"
	"time"
)

// processStopTimeout bounds the wait for a graceful exit after SIGTERM.
const processStopTimeout = 10 * time.Second

// process is a program the control plane runs beside the API server
// (kube-controller-manager, KubeVirt's and CDI's components). It is a child
// of the test process that dies with it: its own process group, and SIGKILL
// when the test process ends without stopping it. One started with
// restartOnExit is started again when it exits, until stop.
type process struct {
	name    string
	spec    processSpec
	logPath string
	// done is closed when the process has ended for good.
	done chan struct{}
	// stopping is closed by stop: a pending restart is abandoned.
	stopping chan struct{}

	mu      sync.Mutex
	cmd     *exec.Cmd // the current run
	waitErr error     // how the last run ended
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
	// restartOnExit starts the process again when it exits after its start
	// (not with ready), after restartDelay, as a kubelet restarts the
	// container of a Deployment's pod: controllers exit by design when
	// they lose their leader lease, as during an API server restart.
	restartOnExit bool
}

// restartDelay is how long a restartOnExit process stays down; it doubles
// with each restart up to maxRestartDelay, as a kubelet's back-off does.
const (
	restartDelay    = time.Second
	maxRestartDelay = 10 * time.Second
)

// startProcess starts spec with its output in a log file in workDir.
func startProcess(ctx context.Context, spec processSpec, workDir string) (*process, error) {
	if spec.restartOnExit && spec.ready != nil {
		return nil, fmt.Errorf("%s: restartOnExit needs a process without ready", spec.name)
	}
	p := &process{
		name: spec.name, spec: spec, logPath: filepath.Join(workDir, spec.name+".log"),
		done: make(chan struct{}), stopping: make(chan struct{}),
	}
	ready := make(chan struct{})
	p.mu.Lock()
	exited, err := p.run(os.O_CREATE|os.O_TRUNC, ready)
	p.mu.Unlock()
	if err != nil {
		return nil, err
	}
	go p.supervise(exited)
	if spec.ready == nil {
		select {
		case <-exited:
			// stop, not a wait for done: a restartOnExit process would be
			// started again instead of ending.
			stopErr := p.stop()
			return nil, errors.Join(fmt.Errorf("%s exited at start (%w): %s", spec.name, p.lastExit(), p.logTail()), stopErr)
		case <-time.After(spec.startGrace):
			return p, nil
		}
	}
	select {
	case <-ready:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("%s exited at start (%w): %s", spec.name, p.lastExit(), p.logTail())
	case <-ctx.Done():
		return nil, errors.Join(fmt.Errorf("%s did not get ready: %w: %s", spec.name, ctx.Err(), p.logTail()), p.stop())
	}
}

// run starts the process once, its output appended to the log opened with
// flag, and returns a channel closed when this run has ended (its error in
// waitErr). The caller holds mu.
func (p *process) run(flag int, ready chan struct{}) (<-chan struct{}, error) {
	logFile, err := os.OpenFile(p.logPath, flag|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("failed to open the %s log: %w", p.name, err)
	}
	defer func() { _ = logFile.Close() }() // the child process holds its own descriptor

	spec := p.spec
	argv := append(append(append([]string{}, spec.wrap...), spec.path), spec.args...)
	// The process must outlive the call that started it, so it is not tied
	// to a context; stop() ends it.
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
	if stdout != nil {
		scanLog, err := os.OpenFile(p.logPath, os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("failed to open the %s log: %w", p.name, err), cmd.Process.Kill())
		}
		go func() {
			defer func() { _ = scanLog.Close() }()
			p.scan(stdout, scanLog, spec.ready, ready)
		}()
	}
	p.cmd = cmd
	exited := make(chan struct{})
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(exited)
	}()
	return exited, nil
}

// supervise waits for each run to end and, for a restartOnExit process not
// being stopped, starts the next one after the back-off; it closes done
// when no run follows.
func (p *process) supervise(exited <-chan struct{}) {
	defer close(p.done)
	for restarts := 0; ; restarts++ {
		<-exited
		if !p.spec.restartOnExit {
			return
		}
		delay := min(restartDelay<<restarts, maxRestartDelay)
		last := p.lastExit()
		select {
		case <-p.stopping:
			return
		default:
		}
		p.note(fmt.Sprintf("%s exited (%v); starting it again in %s, as a kubelet restarts a container", p.name, last, delay))
		select {
		case <-p.stopping:
			return
		case <-time.After(delay):
		}
		// Under mu, so that stop either sees this run or keeps it from
		// starting.
		p.mu.Lock()
		select {
		case <-p.stopping:
			p.mu.Unlock()
			return
		default:
		}
		next, err := p.run(os.O_CREATE, nil)
		p.mu.Unlock()
		if err != nil {
			p.note(err.Error())
			return
		}
		exited = next
	}
}

// note appends a line of the test's own to the process log.
func (p *process) note(line string) {
	f, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	_, _ = fmt.Fprintf(f, "envtest: %s\n", line)
}

func (p *process) lastExit() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waitErr
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

// stop ends the process, gracefully if it lets itself, and keeps a
// restartOnExit process from starting again.
func (p *process) stop() error {
	p.mu.Lock()
	select {
	case <-p.stopping:
	default:
		close(p.stopping)
	}
	cmd := p.cmd
	p.mu.Unlock()
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("failed to signal %s: %w", p.name, err)
	}
	timer := time.NewTimer(processStopTimeout)
	defer timer.Stop()
	select {
	case <-p.done:
		return nil
	case <-timer.C:
		// The whole group: a wrapper's child goes too.
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
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
		if err := p.lastExit(); err != nil {
			return fmt.Errorf("%s exited (%w): %s", p.name, err, strings.TrimSpace(p.logTail()))
		}
		return fmt.Errorf("%s exited with status 0: %s", p.name, strings.TrimSpace(p.logTail()))
	default:
		return nil
	}
}
