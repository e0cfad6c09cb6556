package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// ordinaryUID is who runs the demo in TestDemoInterruptedWithClosedOutput
// when the test runs as root: nobody, a user without any privilege.
const ordinaryUID = 65534

// demoUser is who runs the demo binary: a directory of theirs, their uid,
// their credentials (nil: the test's own) and the environment they need.
type demoUser struct {
	dir  string
	uid  int
	cred *syscall.Credential
	env  []string
}

// newDemoUser returns the test's own user when it is not root. As root it
// returns uid 65534 with a directory of its own, the cached binaries linked
// into it (root's cache is not theirs to read) and a HOME there, so that
// the demo shows it needs no privilege; it skips the test where that user
// cannot run it (no user namespaces for them, the repository unreadable).
func newDemoUser(t *testing.T) demoUser {
	t.Helper()
	if os.Geteuid() != 0 {
		return demoUser{dir: t.TempDir(), uid: os.Getuid()}
	}
	u := demoUser{uid: ordinaryUID, cred: &syscall.Credential{Uid: ordinaryUID, Gid: ordinaryUID}}
	var err error
	// Not t.TempDir: its parent directories are root's alone (0700), which
	// the user could not enter.
	if u.dir, err = os.MkdirTemp("", "kubevirt-demo-"); err != nil { //nolint:usetesting // see above
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(u.dir) })
	if err := os.Chmod(u.dir, 0o755); err != nil { //nolint:gosec // the user runs the demo from it
		t.Fatal(err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := u.run("test", "-r", filepath.Join(root, "go.mod")); err != nil {
		t.Skipf("uid %d cannot read the repository at %s (%v %s), so the demo cannot run as an ordinary user here", u.uid, root, err, out)
	}
	if out, err := u.run("unshare", "--user", "--map-root-user", "--mount", "sh", "-c", "mount -t tmpfs tmpfs /tmp"); err != nil {
		t.Skipf("uid %d may not make a user and mount namespace here (%v: %s), which cdi-controller needs: the demo cannot run as an ordinary user on this host", u.uid, err, out)
	}
	dirs, err := envtest.BinaryDirs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range dirs {
		dst := filepath.Join(u.dir, name)
		if err := linkFiles(src, dst); err != nil {
			t.Fatal(err)
		}
		u.env = append(u.env, name+"="+dst)
	}
	home := filepath.Join(u.dir, "home")
	if err := u.mkdir(home); err != nil {
		t.Fatal(err)
	}
	u.env = append(u.env, "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
	return u
}

// run runs a command as the user and returns its output.
func (u demoUser) run(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...) //nolint:gosec,noctx // fixed probes that end at once
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: u.cred}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// mkdir makes a directory the user owns.
func (u demoUser) mkdir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	if u.cred == nil {
		return nil
	}
	return os.Chown(dir, int(u.cred.Uid), int(u.cred.Gid))
}

// checkOwns fails t for every process that does not run as the user.
func (u demoUser) checkOwns(t *testing.T, ps []envtest.Process) {
	t.Helper()
	for _, p := range ps {
		uid, err := p.UID()
		switch {
		case err != nil && p.Alive():
			t.Error(err)
		case err == nil && uid != u.uid:
			t.Errorf("%s runs as uid %d, want %d", p, uid, u.uid)
		}
	}
}

// linkFiles makes dst a directory of hard links to the files of src,
// copying where a link cannot be made (another file system).
func linkFiles(src, dst string) error {
	if err := os.Mkdir(dst, 0o755); err != nil { //nolint:gosec // the user runs these binaries
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		from, to := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if err := os.Link(from, to); err == nil {
			continue
		} else if !errors.Is(err, syscall.EXDEV) {
			return fmt.Errorf("failed to link %s: %w", from, err)
		}
		if err := copyFile(from, to); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from) //nolint:gosec // a cached binary
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755) //nolint:gosec // an executable
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		return errors.Join(fmt.Errorf("failed to copy %s: %w", from, err), out.Close())
	}
	return out.Close()
}

// String names the user for messages.
func (u demoUser) String() string { return "uid " + strconv.Itoa(u.uid) }
