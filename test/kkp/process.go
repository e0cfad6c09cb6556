package kkp

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/gobuild"
)

// UID and GID are the identity Kubermatic runs machine-controller and its
// webhook as (nobody).
const (
	UID = 65534
	GID = 65534
)

// Binaries builds cmd/machine-controller into dir as machine-controller and
// links it as webhook, as the image holds it; it returns the two paths.
func Binaries(tb testing.TB, dir string) (controller, webhook string) {
	tb.Helper()
	controller, webhook = filepath.Join(dir, "machine-controller"), filepath.Join(dir, "webhook")
	gobuild.Binary(tb, gobuild.MachineController, controller)
	if err := os.Link(controller, webhook); err != nil {
		tb.Fatal(err)
	}
	return controller, webhook
}

// Process is a binary started as Kubermatic starts it.
type Process struct {
	name   string
	cmd    *exec.Cmd
	log    lockedBuffer
	exited chan struct{}
	err    error
}

// Start runs bin with args and env (and nothing else of this process's
// environment but PATH), as UID and GID when this process may switch to
// them, in the root directory, until the test ends. The kernel kills it
// when this process dies. The files it needs must be readable by UID.
func Start(tb testing.TB, name, bin string, args, env []string) *Process {
	tb.Helper()
	p := newProcess(name, bin, args, append([]string{"PATH=" + os.Getenv("PATH")}, env...))
	if os.Geteuid() == 0 {
		p.cmd.SysProcAttr.Credential = &syscall.Credential{Uid: UID, Gid: GID}
	}
	if err := p.cmd.Start(); err != nil {
		tb.Fatalf("failed to start %s: %v", name, err)
	}
	go p.wait()
	tb.Cleanup(func() { p.Stop(tb) })
	return p
}

// newProcess prepares bin with args and exactly env, in the root
// directory. The kernel kills it when the thread that starts it ends: for
// a goroutine not locked to its thread, when this process dies.
func newProcess(name, bin string, args, env []string) *Process {
	p := &Process{name: name, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, args...) //nolint:gosec,noctx // the test's own binary; stopped in Cleanup
	p.cmd.Dir = "/"
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = &p.log, &p.log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return p
}

// wait waits for the started process and records how it ended.
func (p *Process) wait() {
	p.err = p.cmd.Wait()
	close(p.exited)
}

// AsUID reports whether processes run as UID (this process is root).
func AsUID() bool { return os.Geteuid() == 0 }

// Running fails the test if the process has ended.
func (p *Process) Running(tb testing.TB) {
	tb.Helper()
	select {
	case <-p.exited:
		tb.Fatalf("%s ended: %v\n%s", p.name, p.err, p.Log())
	default:
	}
}

// Stop sends SIGTERM and waits up to 30 s for the process to end, then
// kills it; an exit other than by the signal fails the test.
func (p *Process) Stop(tb testing.TB) {
	tb.Helper()
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
		tb.Errorf("%s did not stop within 30 s of SIGTERM", p.name)
	}
	var exit *exec.ExitError
	if p.err != nil && (!errors.As(p.err, &exit) || exit.ExitCode() != 0) {
		tb.Logf("%s ended: %v", p.name, p.err)
	}
}

// Kill ends the process with SIGKILL, as the kernel's OOM killer or a
// node failure does: no handler runs, nothing is flushed or released.
func (p *Process) Kill(tb testing.TB) {
	tb.Helper()
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		tb.Fatalf("failed to kill %s: %v", p.name, err)
	}
	<-p.exited
}

// PID is the process's id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited is closed once the process has ended; Err then says how.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Err is how the process ended (nil for exit status 0), once Exited is
// closed.
func (p *Process) Err() error { return p.err }

// Log returns what the process printed so far.
func (p *Process) Log() string { return p.log.String() }

// Written lists the files and directories owned by UID that were changed
// after since under dirs: what a process running as UID wrote, where it
// could.
func Written(since time.Time, dirs ...string) ([]string, error) {
	var out []string
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil //nolint:nilerr // unreadable entries are not ours
			}
			info, err := d.Info()
			if err != nil {
				return nil //nolint:nilerr // gone meanwhile
			}
			st, ok := info.Sys().(*syscall.Stat_t)
			if ok && st.Uid == UID && info.ModTime().After(since) {
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("failed to walk %s: %w", dir, err)
		}
	}
	return out, nil
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Clone(b.buf.String())
}
