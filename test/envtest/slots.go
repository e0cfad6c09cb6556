package envtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// slotsEnv sets how many test processes of this user run control planes at
// once; by default one per CPU.
const slotsEnv = "ENVTEST_PROCESSES"

// slotHeldEnv is set in a test process that holds a slot, so that a child
// it starts (a test running its own binary as a helper) runs under the
// same slot instead of waiting for another.
const slotHeldEnv = "ENVTEST_SLOT_HELD"

// slotWaitTimeout bounds the wait for a free slot; go test's -timeout
// usually ends a test process earlier.
const slotWaitTimeout = time.Hour

var (
	// slotWait is the outcome of the process's one wait for a slot.
	slotWait struct {
		once sync.Once
		err  error
	}
	// slotMu guards slotFile against two control planes of one process
	// giving back the slot at once.
	slotMu sync.Mutex
	// slotFile is the held slot's lock; referenced so that no finalizer
	// closes it (and drops the lock) before the process exits.
	slotFile *os.File
)

// TakeSlot is what New does first in a test process; a test calls it
// itself before it starts another program that runs control planes (the
// demo binary), so that those count as its own.
func TakeSlot(ctx context.Context) error {
	return takeSlot(ctx)
}

// takeSlot makes this test process one of at most slots() test processes
// of this user that run control planes at a time, one per CPU: such a
// process uses half a core to one core on average (its control planes
// wait for the controllers under test most of the time), so one per CPU
// keeps the cores busy without more than one control plane's start-up
// burst per core, whatever go test's -p. The first control plane of a
// process waits for a free slot (a flock on a file in the cache
// directory); the process keeps it until it exits, when the kernel drops
// the lock, a crash included. Only test binaries take a slot: the demo
// runs on its own.
func takeSlot(ctx context.Context) error {
	if !testing.Testing() || os.Getenv(slotHeldEnv) != "" {
		return nil
	}
	slotWait.once.Do(func() { slotWait.err = waitForSlot(ctx) })
	return slotWait.err
}

func waitForSlot(ctx context.Context) error {
	dir, err := slotDir()
	if err != nil {
		return err
	}
	n, err := slots()
	if err != nil {
		return err
	}
	files := make([]*os.File, n)
	for i := range files {
		path := filepath.Join(dir, fmt.Sprintf("slot-%d.lock", i))
		if files[i], err = os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600); err != nil { //nolint:gosec // the slot's own path
			return fmt.Errorf("failed to open the control-plane slot %s: %w", path, err)
		}
	}
	held := -1
	start := time.Now()
	err = poll.Wait(ctx, slotWaitTimeout, func() error {
		for i, f := range files {
			err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			if errors.Is(err, syscall.EWOULDBLOCK) {
				continue
			}
			if err != nil {
				return poll.Final(fmt.Errorf("failed to lock the control-plane slot %s: %w", f.Name(), err))
			}
			held = i
			return nil
		}
		return fmt.Errorf("all %d control-plane slots in %s are taken by other test processes (%s=%d)", n, dir, slotsEnv, n)
	})
	for i, f := range files {
		if i != held {
			_ = f.Close()
		}
	}
	if err != nil {
		return err
	}
	slotFile = files[held]
	if waited := time.Since(start); waited > time.Second {
		fmt.Fprintf(os.Stderr, "envtest: waited %s for a control-plane slot\n", waited.Round(time.Second))
	}
	return os.Setenv(slotHeldEnv, strconv.Itoa(os.Getpid()))
}

// withoutSlot runs wait, something that waits for another process without
// using a CPU, with this process's slot given back meanwhile, and then
// waits for a slot again. Nobody then holds a slot while waiting for a lock
// that a process waiting for a slot holds. Outside a slot it just runs
// wait.
func withoutSlot(ctx context.Context, wait func() error) error {
	slotMu.Lock()
	defer slotMu.Unlock()
	if slotFile == nil {
		return wait()
	}
	err := errors.Join(syscall.Flock(int(slotFile.Fd()), syscall.LOCK_UN), slotFile.Close())
	slotFile = nil
	if err != nil {
		return fmt.Errorf("failed to give back the control-plane slot: %w", err)
	}
	return errors.Join(wait(), waitForSlot(ctx))
}

// slots is the number of test processes that may run control planes at
// once.
func slots() (int, error) {
	if v := os.Getenv(slotsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("%s=%q: want a whole number of at least 1", slotsEnv, v)
		}
		return n, nil
	}
	return max(1, runtime.NumCPU()), nil
}

// slotDir is where the slots' lock files are: kubevirt-kkp/control-planes
// in the user's cache directory, beside the binaries.
func slotDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("failed to find the cache directory for the control-plane slots: %w", err)
	}
	dir := filepath.Join(cache, "kubevirt-kkp", "control-planes")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("failed to create %s: %w", dir, err)
	}
	return dir, nil
}
