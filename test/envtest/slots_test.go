package envtest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// A test process waits while other processes hold every slot and takes
// one as soon as it is free.
func TestSlotsLimitTestProcesses(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv(slotsEnv, "1")
	t.Setenv(slotHeldEnv, "")
	dir, err := slotDir()
	if err != nil {
		t.Fatal(err)
	}
	// Another process's slot: a lock on its own open file.
	other, err := os.OpenFile(filepath.Join(dir, "slot-0.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- waitForSlot(t.Context()) }()
	poll.Holds(t, 500*time.Millisecond, func() error {
		select {
		case err := <-done:
			return errors.Join(errors.New("took the slot another process holds"), err)
		default:
			return nil
		}
	})
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("waitForSlot after the slot was freed: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the freed slot was not taken within 10s")
	}
	if os.Getenv(slotHeldEnv) == "" {
		t.Errorf("%s is not set for the children of the process that holds the slot", slotHeldEnv)
	}
	_ = slotFile.Close()
	slotFile = nil
}

func TestSlotsRefuseABadCount(t *testing.T) {
	for _, v := range []string{"0", "-1", "two"} {
		t.Setenv(slotsEnv, v)
		if _, err := slots(); err == nil || !strings.Contains(err.Error(), slotsEnv) {
			t.Errorf("%s=%s: got %v, want an error naming the variable", slotsEnv, v, err)
		}
	}
}

// While it waits for something else (another process's cdi-controller),
// a test process gives its slot back and takes a slot again afterwards.
func TestWithoutSlotGivesTheSlotBack(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv(slotsEnv, "1")
	t.Setenv(slotHeldEnv, "")
	if err := waitForSlot(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = slotFile.Close()
		slotFile = nil
	}()
	dir, err := slotDir()
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.OpenFile(filepath.Join(dir, "slot-0.lock"), os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Close() }()
	lock := func() error { return syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }
	err = withoutSlot(t.Context(), func() error {
		if err := lock(); err != nil {
			t.Errorf("the slot was not given back while waiting: %v", err)
		}
		return syscall.Flock(int(other.Fd()), syscall.LOCK_UN)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := lock(); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Errorf("after the wait another process could take the only slot (%v): it was not taken again", err)
	}
}

// lockFile with timeout 0 tries once: a lock another process holds is
// reported as errLocked at once, which startCDI waits out without a slot.
func TestLockFileTriesOnceForZero(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	unlock, err := lockFile(t.Context(), path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unlock() }()
	start := time.Now()
	if _, err := lockFile(t.Context(), path, 0); !errors.Is(err, errLocked) {
		t.Fatalf("lockFile of a held lock = %v, want errLocked", err)
	}
	if waited := time.Since(start); waited > time.Second {
		t.Errorf("lockFile with timeout 0 waited %s", waited)
	}
}
