package main

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

type failingWriter struct{ writes int }

func (f *failingWriter) Write([]byte) (int, error) {
	f.writes++
	return 0, errors.New("write |1: broken pipe")
}

// TestOutputIgnoresWriteErrors: with nobody reading (EPIPE), progress
// lines fail silently, so neither the teardown nor the build of the
// binaries (whose progress goes through it) fails on them.
func TestOutputIgnoresWriteErrors(t *testing.T) {
	f := &failingWriter{}
	out := &output{w: f, start: time.Now()}
	for range 2 {
		if n, err := fmt.Fprintln(out, stepPrefix+"Deleting MachineDeployment"); err != nil || n != len(stepPrefix)+27 {
			t.Fatalf("Write = %d, %v; want all written and no error", n, err)
		}
	}
	if f.writes != 2 {
		t.Errorf("passed on %d writes, want 2", f.writes)
	}
}

func TestOutputStampsSteps(t *testing.T) {
	var buf bytes.Buffer
	out := &output{w: &buf, start: time.Now().Add(-83 * time.Second)}
	fmt.Fprintln(out, stepPrefix+"Control planes up")
	fmt.Fprintln(out, "MACHINE  VM")
	if want := "==> [1m23s] Control planes up\nMACHINE  VM\n"; buf.String() != want {
		t.Errorf("output %q, want %q", buf.String(), want)
	}
}

func TestTimedLinesHeartbeat(t *testing.T) {
	var buf bytes.Buffer
	w := &timedLines{out: &buf, start: time.Now()}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() { w.heartbeat(done, 10*time.Millisecond); close(finished) }()
	time.Sleep(30 * time.Millisecond) // no step has begun: no heartbeat
	fmt.Fprintln(w, "envtest-binaries: building etcd v3.6.16 (about 2 minutes on a cold cache)")
	beat := poll.Wait(t.Context(), 5*time.Second, func() error {
		w.mu.Lock()
		defer w.mu.Unlock()
		if !bytes.Contains(buf.Bytes(), []byte("still building")) {
			return errors.New("no heartbeat line")
		}
		return nil
	})
	close(done)
	<-finished
	if beat != nil {
		t.Error(beat)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	want := regexp.MustCompile(`^    \[0s\] envtest-binaries: building etcd v3\.6\.16 \(about 2 minutes on a cold cache\)\n` +
		`(    \[0s\] still building; this happens once, later runs use the cached binaries\n)+$`)
	if !want.MatchString(buf.String()) {
		t.Errorf("output:\n%s", buf.String())
	}
}
