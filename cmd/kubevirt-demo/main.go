// Command kubevirt-demo runs the KubeVirt provider end to end on this
// machine: it starts a local infra control plane built from source
// (kube-apiserver, etcd, kube-controller-manager), the KubeVirt/CDI test
// simulator, and turns the Machines of examples/machinedeployment.yaml into
// VirtualMachines, DataVolumes and cloud-init Secrets, then removes them.
// The simulator stands in for KubeVirt and CDI because no container runtime
// runs here; every object goes through the real API server.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.uber.org/zap"
)

func main() {
	var opts options
	flag.StringVar(&opts.example, "f", "examples/machinedeployment.yaml", "MachineDeployment to run")
	flag.BoolVar(&opts.once, "once", false, "exit as soon as every VM runs (after cleaning up) instead of waiting for Ctrl-C")
	flag.DurationVar(&opts.timeout, "timeout", 3*time.Minute, "how long the VMs may take to run")
	flag.StringVar(&opts.workDir, "work-dir", "bin/demo", "where the infra kubeconfig is written")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts.out = os.Stdout
	opts.log = zap.NewNop().Sugar()
	if err := run(ctx, opts); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		stop()
		os.Exit(1)
	}
}
