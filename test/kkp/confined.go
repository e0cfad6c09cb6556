package kkp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// StartConfined runs bin, a path inside root, with args and exactly env as
// Kubermatic's pod runs it: as UID and GID with no capabilities, with root
// as its root directory, read-only, and only a new tmpfs at /tmp (its
// emptyDir) writable; /proc is mounted as in any container. The mounts are
// made in a mount namespace of the process's own, so nothing of them is
// seen outside it, and end with it. It skips tb unless this process is root
// with CAP_SYS_ADMIN. Stop and Cleanup end it as Start's.
func StartConfined(tb testing.TB, name, root, bin string, args, env []string) *Process {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("a confined process needs root: to switch to uid 65534, chroot and mount")
	}
	for _, dir := range []string{"tmp", "proc"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	p := newProcess(name, bin, args, env)
	p.cmd.SysProcAttr.Chroot = root
	p.cmd.SysProcAttr.Credential = &syscall.Credential{Uid: UID, Gid: GID}
	started := make(chan error, 1)
	go func() {
		// The namespace is this thread's alone; the thread is never
		// unlocked, so the runtime ends it with the goroutine, which lives
		// as long as the process does: Pdeathsig follows the thread.
		runtime.LockOSThread()
		if err := confine(root); err != nil {
			started <- err
			return
		}
		if err := p.cmd.Start(); err != nil {
			started <- fmt.Errorf("failed to start %s: %w", name, err)
			return
		}
		started <- nil
		p.wait()
	}()
	if err := <-started; errors.Is(err, syscall.EPERM) {
		tb.Skipf("a confined process needs CAP_SYS_ADMIN, which this root lacks: %v", err)
	} else if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Stop(tb) })
	return p
}

// confine moves the calling thread into a new mount namespace where root
// is read-only, with a tmpfs on root/tmp and proc on root/proc.
func confine(root string) error {
	if err := syscall.Unshare(syscall.CLONE_NEWNS); err != nil {
		return fmt.Errorf("failed to make a mount namespace: %w", err)
	}
	mounts := []struct {
		source, target, fstype string
		flags                  uintptr
		data                   string
	}{
		// Nothing mounted here propagates to the host's namespace.
		{"", "/", "", syscall.MS_REC | syscall.MS_PRIVATE, ""},
		{root, root, "", syscall.MS_BIND | syscall.MS_REC, ""},
		{"", root, "", syscall.MS_BIND | syscall.MS_REMOUNT | syscall.MS_RDONLY | syscall.MS_NOSUID | syscall.MS_NODEV, ""},
		{"tmpfs", filepath.Join(root, "tmp"), "tmpfs", syscall.MS_NOSUID | syscall.MS_NODEV, "mode=1777,size=64m"},
		{"proc", filepath.Join(root, "proc"), "proc", syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC, ""},
	}
	for _, m := range mounts {
		if err := syscall.Mount(m.source, m.target, m.fstype, m.flags, m.data); err != nil {
			return fmt.Errorf("failed to mount %s on %s: %w", strings.TrimSpace(m.fstype+" "+m.source), m.target, err)
		}
	}
	return nil
}

// CheckConfined fails tb unless the running process is as StartConfined
// makes it, as the kernel reports it: uid and gid UID and GID, no effective
// capability, its root read-only and /tmp a writable tmpfs.
func (p *Process) CheckConfined(tb testing.TB) {
	tb.Helper()
	proc := fmt.Sprintf("/proc/%d/", p.PID())
	status, err := os.ReadFile(proc + "status")
	if err != nil {
		tb.Fatal(err)
	}
	lines := map[string]string{}
	for _, line := range strings.Split(string(status), "\n") {
		if key, value, ok := strings.Cut(line, ":"); ok {
			lines[key] = strings.Join(strings.Fields(value), " ")
		}
	}
	// real, effective, saved and file-system ids; no supplementary group
	uids, gids := fmt.Sprintf("%d %d %d %d", UID, UID, UID, UID), fmt.Sprintf("%d %d %d %d", GID, GID, GID, GID)
	for key, want := range map[string]string{"Uid": uids, "Gid": gids, "Groups": "", "CapEff": "0000000000000000"} {
		if lines[key] != want {
			tb.Errorf("%s's %s is %q, want %q", p.name, key, lines[key], want)
		}
	}
	mountinfo, err := os.ReadFile(proc + "mountinfo")
	if err != nil {
		tb.Fatal(err)
	}
	mounts := map[string]string{}
	for _, line := range strings.Split(string(mountinfo), "\n") {
		// id parent dev root mountpoint options ... - fstype source super-options
		f := strings.Fields(line)
		if len(f) > 6 {
			mounts[f[4]] = f[5] + " " + strings.Join(f[slices.Index(f, "-")+1:], " ")
		}
	}
	if m := mounts["/"]; !strings.HasPrefix(m, "ro,") {
		tb.Errorf("%s's root is mounted %q, want read-only", p.name, m)
	}
	if m := mounts["/tmp"]; !strings.HasPrefix(m, "rw,") || !strings.Contains(m, " tmpfs ") {
		tb.Errorf("%s's /tmp is mounted %q, want a writable tmpfs", p.name, m)
	}
}
