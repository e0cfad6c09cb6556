// Command kubevirt-demo runs the whole product on this machine: two local
// control planes built from source (a user cluster and a KubeVirt infra
// cluster, each kube-apiserver + etcd + kube-controller-manager; the infra
// one with KubeVirt's own admission and virt-controller and CDI's
// cdi-controller), the machine-controller, the infra-controller, and the
// test simulator, which plays what needs real nodes (the infra nodes'
// kubelets, virt-handler, the guests) because no container runtime runs
// here. It creates a TenantCluster for the
// user cluster, applies examples/machinedeployment.yaml, waits until every
// Machine has a Ready Node, and on exit deletes the MachineDeployment and
// the TenantCluster and checks that nothing is left on either cluster. Every
// object goes through the real API servers.
//
// Ctrl-C once deletes, verifies and stops everything, and the demo exits 0
// when nothing is left (objects or processes); Ctrl-C twice kills every
// process the demo started and exits 130. The processes it starts die with
// it however it ends.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	var opts options
	flag.StringVar(&opts.example, "f", "examples/machinedeployment.yaml", "MachineDeployment to run")
	flag.BoolVar(&opts.once, "once", false, "exit as soon as every Machine has a Ready Node (after cleaning up) instead of waiting for Ctrl-C")
	flag.DurationVar(&opts.timeout, "timeout", 3*time.Minute, "how long the VMs may take to run")
	flag.StringVar(&opts.workDir, "work-dir", "bin/demo", "where the user and infra kubeconfigs and the controllers' log are written")
	flag.Parse()
	os.Exit(demo(opts))
}

// demo runs the demo and returns the exit status.
func demo(opts options) int {
	out := &output{w: os.Stdout, start: time.Now()}
	opts.out = out
	log, closeLog, err := openLog(opts.workDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		return 1
	}
	defer func() { _ = closeLog() }()
	opts.log = log
	ctx, signals := handleSignals(out)
	defer signals.stop()

	err = run(ctx, opts)
	// run has stopped every process it started; what still runs was not
	// stopped and is killed now, so that nothing holds ports or memory.
	left, killErr := killChildren()
	err = errors.Join(err, killErr)
	if len(left) > 0 {
		err = errors.Join(err, fmt.Errorf("left running after the teardown (killed now): %s", describe(left)))
	}
	switch {
	case err == nil:
		fmt.Fprintln(out, stepPrefix+"Stopped; no process of the demo is left")
		return 0
	case signals.interrupted() && len(left) == 0 && errors.Is(err, context.Canceled):
		fmt.Fprintln(out, stepPrefix+"Stopped before the demo was up; no process of the demo is left")
		return 0
	default:
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		return 1
	}
}
