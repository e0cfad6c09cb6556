package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// exitInterruptedTwice is the exit status after a second interrupt: the
// shell's status for a process ended by SIGINT.
const exitInterruptedTwice = 130

// stopSignals ask the demo to stop: Ctrl-C, kill, and a closed terminal.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// interrupts handles the signals of a demo run.
type interrupts struct {
	signals chan os.Signal
	pipe    chan os.Signal
	cancel  context.CancelFunc
	count   atomic.Int32
}

// handleSignals returns a context that ends at the first stop signal, so
// that run deletes what it made, verifies that nothing is left and stops
// the control planes. At the second, the demo kills every process it
// started and exits at once, for a person who will not wait.
//
// SIGPIPE is caught too: when the demo's output is a pipe whose reader has
// gone (`make demo | tee demo.log` and Ctrl-C, which ends tee as well), the
// Go runtime would otherwise kill the demo at its next line of progress,
// before the teardown; caught, a write fails with EPIPE instead, which
// output ignores.
func handleSignals(out io.Writer) (context.Context, *interrupts) {
	ctx, cancel := context.WithCancel(context.Background())
	in := &interrupts{signals: make(chan os.Signal, 2), pipe: make(chan os.Signal, 1), cancel: cancel}
	signal.Notify(in.pipe, syscall.SIGPIPE)
	signal.Notify(in.signals, stopSignals...)
	go in.watch(out)
	return ctx, in
}

func (in *interrupts) watch(out io.Writer) {
	for sig := range in.signals {
		if in.count.Add(1) == 1 {
			fmt.Fprintf(out, stepPrefix+"%s: deleting what the demo made, checking that nothing is left and stopping the control planes (again to kill everything at once)\n", sig)
			in.cancel()
			continue
		}
		killed, err := killChildren()
		fmt.Fprintf(out, stepPrefix+"%s again: killed %s\n", sig, describe(killed))
		if err != nil {
			fmt.Fprintln(os.Stderr, "demo:", err)
		}
		os.Exit(exitInterruptedTwice)
	}
}

// interrupted reports whether a stop signal has come.
func (in *interrupts) interrupted() bool {
	return in.count.Load() > 0
}

// stop stops handling the signals.
func (in *interrupts) stop() {
	signal.Stop(in.signals)
	signal.Stop(in.pipe)
	in.cancel()
}

// killChildren kills every process the demo started that still runs, with
// its process group. The control planes' processes also get SIGKILL from
// the kernel when the demo ends (their parent-death signal); this is for
// when the demo must end them itself.
func killChildren() ([]envtest.Process, error) {
	children, err := envtest.Children(os.Getpid())
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, c := range children {
		errs = append(errs, c.Kill())
	}
	return children, errors.Join(errs...)
}

// describe lists processes for a message.
func describe(ps []envtest.Process) string {
	if len(ps) == 0 {
		return "no process (none was left)"
	}
	names := make([]string, 0, len(ps))
	for _, p := range ps {
		names = append(names, p.String())
	}
	return strings.Join(names, ", ")
}
