package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/gobuild"
)

// Bounds of the demo run: starting takes about 90 s on a warm cache, a
// teardown under a minute; both take longer on a busy machine.
const (
	demoUpTimeout       = 6 * time.Minute
	demoTeardownTimeout = 3 * time.Minute
)

// TestDemoInterruptedWithClosedOutput runs the demo binary as `make demo |
// tee demo.log` does: the TenantCluster prepares both clusters, the
// webhook refuses the broken example, the example MachineDeployment becomes
// three Machines with Ready Nodes. Then it does what Ctrl-C does there: tee
// goes away (its end of the pipe is closed) and the demo gets SIGINT. The
// demo must still delete both and verify that nothing is left (it exits 1
// otherwise, as `make demo-check` does), exit 0, and leave none of the processes it
// started (etcd, kube-apiserver, kube-controller-manager, virt-controller,
// cdi-controller) running; it must not print controller-runtime's "never
// called SetLogger" stack trace. It runs as an ordinary user: as uid 65534
// when the test runs as root (see newDemoUser), and every process of the
// demo must run as that user.
func TestDemoInterruptedWithClosedOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two control planes")
	}
	// The demo's control planes count as this test process's.
	if err := envtest.TakeSlot(t.Context()); err != nil {
		t.Fatal(err)
	}
	user := newDemoUser(t)
	bin := filepath.Join(user.dir, "kubevirt-demo")
	gobuild.Binary(t, "github.com/kubevirt-kkp/kkp-kubevirt/cmd/kubevirt-demo", bin)
	workDir := filepath.Join(user.dir, "work")
	if err := user.mkdir(workDir); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := os.Create(filepath.Join(workDir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-work-dir", workDir) //nolint:gosec,noctx // the binary just built; stopped by SIGINT below
	cmd.Dir = filepath.Join("..", "..")
	cmd.Stdout, cmd.Stderr = w, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: user.cred}
	cmd.Env = append(os.Environ(), user.env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	lines, up := readUntil(r, "Running until Ctrl-C", demoUpTimeout, exited)
	if !up {
		t.Fatalf("the demo did not come up as %s within %s:\n%s\nstderr:\n%s", user, demoUpTimeout, lines, readFile(stderr.Name()))
	}
	for _, want := range []string{
		"TenantCluster demo ready: namespace cluster-demo with preset kubermatic-standard",
		`The admission webhook refused the example with memory "lots": `,
		"spec.template.spec.providerSpec.value.cloudProviderSpec.virtualMachine.template.memory: Invalid value",
		"Machines 3/3, VMs 3 (running 3), Nodes ready 3/3",
	} {
		if !strings.Contains(lines, want) {
			t.Errorf("output lacks %q:\n%s", want, lines)
		}
	}
	started, err := envtest.Descendants(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	user.checkOwns(t, started)
	if n := len(started); n < 8 {
		t.Errorf("the demo runs %d processes, want at least 8 (etcd, kube-apiserver and kube-controller-manager twice, virt-controller, cdi-controller): %s", n, describe(started))
	}

	// Ctrl-C in `make demo | tee demo.log`: tee ends too, so the demo's
	// output goes nowhere from now on.
	_ = r.Close()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		if err != nil {
			t.Errorf("the demo ended with %v after SIGINT, want exit status 0; stderr:\n%s", err, readFile(stderr.Name()))
		}
	case <-time.After(demoTeardownTimeout):
		t.Fatalf("the demo did not end within %s of SIGINT; stderr:\n%s", demoTeardownTimeout, readFile(stderr.Name()))
	}
	for _, p := range started {
		if p.Alive() {
			t.Errorf("%s outlived the demo", p)
			_ = p.Kill()
		}
	}
	if errOut := readFile(stderr.Name()); strings.Contains(errOut, "SetLogger") {
		t.Errorf("the demo printed controller-runtime's logger warning:\n%s", errOut)
	}
}

// readUntil reads lines from r until one contains want, timeout passes or
// the process exits, and returns what it read and whether want came.
func readUntil(r *os.File, want string, timeout time.Duration, exited chan error) (string, bool) {
	lines, stop := make(chan string), make(chan struct{})
	defer close(stop)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-stop:
				return
			}
		}
	}()
	var read strings.Builder
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				return read.String(), false
			}
			read.WriteString(line + "\n")
			if strings.Contains(line, want) {
				return read.String(), true
			}
		case err := <-exited:
			exited <- err
			return read.String() + "exited: " + errorString(err), false
		case <-deadline:
			return read.String(), false
		}
	}
}

func errorString(err error) string {
	if err == nil {
		return "status 0"
	}
	return err.Error()
}

func readFile(path string) string {
	b, err := os.ReadFile(path) //nolint:gosec // the test's own file
	if err != nil {
		return err.Error()
	}
	return string(b)
}
