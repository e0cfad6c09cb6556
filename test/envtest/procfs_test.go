package envtest

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestCPUTime reads this process's CPU time while it spins and compares it
// with what getrusage reports for the same process, taken just before and
// just after: a wrong field (the children's times are 0 here) or a wrong
// unit falls outside.
func TestCPUTime(t *testing.T) {
	rusage := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := rusage()
	for deadline := time.Now().Add(20 * time.Second); rusage()-start < 300*time.Millisecond; {
		if time.Now().After(deadline) {
			t.Fatal("did not get 300 ms of CPU within 20 s")
		}
	}
	before := rusage()
	got, err := CPUTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	after := rusage()
	// /proc counts in ticks of 10 ms; getrusage more finely.
	if tick := 10 * time.Millisecond; got < before-2*tick || got > after+2*tick {
		t.Errorf("CPUTime = %s, want between %s and %s (getrusage)", got, before, after)
	}
}
