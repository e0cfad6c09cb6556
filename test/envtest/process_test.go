package envtest

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// TestRestartOnExit: a restartOnExit process that exits is started again
// after the back-off, as a kubelet restarts a container, and stop ends it
// for good: no run starts after stop, also not one whose back-off was
// pending.
func TestRestartOnExit(t *testing.T) {
	p, err := startProcess(t.Context(), processSpec{
		name: "crasher", path: "/bin/sh", args: []string{"-c", "echo started; sleep 0.2; exit 3"},
		startGrace: 50 * time.Millisecond, restartOnExit: true,
	}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runs := func() int {
		log, _ := os.ReadFile(p.logPath)
		return strings.Count(string(log), "started\n")
	}
	poll.Until(t, 10*time.Second, func() error {
		if n := runs(); n < 2 {
			return fmt.Errorf("%d runs, want 2", n)
		}
		return nil
	})
	if err := p.exitedEarly(); err != nil {
		t.Errorf("a restarting process counts as exited: %v", err)
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	stopped := runs()
	time.Sleep(2 * restartDelay)
	if n := runs(); n != stopped {
		t.Errorf("%d runs after stop, want none", n-stopped)
	}
	log, _ := os.ReadFile(p.logPath)
	if !strings.Contains(string(log), "envtest: crasher exited (exit status 3); starting it again in 1s") {
		t.Errorf("the log does not say why the process was started again:\n%s", log)
	}
}

// TestWithoutRestartAnExitIsFinal: without restartOnExit an exited
// process stays down and is reported.
func TestWithoutRestartAnExitIsFinal(t *testing.T) {
	p, err := startProcess(t.Context(), processSpec{
		name: "once", path: "/bin/sh", args: []string{"-c", "sleep 0.2; exit 3"}, startGrace: 50 * time.Millisecond,
	}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 5*time.Second, func() error {
		if err := p.exitedEarly(); err == nil || !strings.Contains(err.Error(), "exit status 3") {
			return fmt.Errorf("exitedEarly = %w, want exit status 3", err)
		}
		return nil
	})
}

// TestRestartOnExitCrashAtStart: a restartOnExit process that exits within
// its start grace is reported as exited at start, and not started again.
func TestRestartOnExitCrashAtStart(t *testing.T) {
	_, err := startProcess(t.Context(), processSpec{
		name: "early", path: "/bin/sh", args: []string{"-c", "exit 3"},
		startGrace: 500 * time.Millisecond, restartOnExit: true,
	}, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "exited at start (exit status 3)") {
		t.Fatalf("startProcess = %v, want an exit at start", err)
	}
}
