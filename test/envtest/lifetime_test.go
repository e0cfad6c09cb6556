package envtest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// lifetimeHelperEnv makes TestControlPlaneDiesWithItsProcess the process
// that owns a control plane instead of the one that checks it.
const lifetimeHelperEnv = "ENVTEST_LIFETIME_HELPER"

// TestControlPlaneDiesWithItsProcess starts a control plane with
// kube-controller-manager in a child test process, kills that process with
// SIGKILL (nothing stops the control plane), and checks that etcd,
// kube-apiserver and kube-controller-manager end with it.
func TestControlPlaneDiesWithItsProcess(t *testing.T) {
	if os.Getenv(lifetimeHelperEnv) == "1" {
		ownControlPlane(t)
		return
	}
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestControlPlaneDiesWithItsProcess$") //nolint:gosec,noctx // this test binary; killed below
	// The child cannot remove the directories envtest makes for etcd's data
	// and the webhook's serving certificates once it is killed: they go
	// into a temporary directory of this test, removed with it.
	cmd.Env = append(os.Environ(), lifetimeHelperEnv+"=1", "TMPDIR="+t.TempDir())
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	workDir := readyLine(t, stdout)
	t.Cleanup(func() { _ = os.RemoveAll(workDir) })

	children, err := Children(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(children), "etcd kube-apiserver kube-controller"; got != want {
		t.Fatalf("children of the control plane's process: %q, want %q", got, want)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	err = poll.Wait(t.Context(), 10*time.Second, func() error {
		for _, c := range children {
			if c.Alive() {
				return fmt.Errorf("%s outlived the process that started it", c)
			}
		}
		return nil
	})
	if err != nil {
		t.Error(err)
		for _, c := range children {
			if c.Alive() {
				_ = c.Kill()
			}
		}
	}
}

// ownControlPlane is the child: it starts a control plane, prints its work
// directory and waits to be killed.
func ownControlPlane(t *testing.T) {
	t.Helper()
	env, err := New(t.Context(), WithControllerManager(), WithCRDFiles())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("ready " + env.workDir)
	time.Sleep(time.Hour) // until the parent kills this process
}

// readyLine waits for the child's "ready <work dir>" line and returns the
// work directory.
func readyLine(t *testing.T, stdout interface{ Read([]byte) (int, error) }) string {
	t.Helper()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if dir, ok := strings.CutPrefix(sc.Text(), "ready "); ok {
				lines <- dir
			}
		}
		close(lines)
	}()
	select {
	case dir, ok := <-lines:
		if !ok {
			t.Fatal("the child ended without starting a control plane")
		}
		return dir
	case <-time.After(2 * time.Minute):
		t.Fatal("the control plane did not start within 2 minutes")
		return ""
	}
}

func names(ps []Process) string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
