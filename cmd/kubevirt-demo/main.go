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
	flag.BoolVar(&opts.once, "once", false, "exit as soon as every Machine has a Ready Node (after cleaning up) instead of waiting for Ctrl-C")
	flag.DurationVar(&opts.timeout, "timeout", 3*time.Minute, "how long the VMs may take to run")
	flag.StringVar(&opts.workDir, "work-dir", "bin/demo", "where the user and infra kubeconfigs are written")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts.out = os.Stdout
	opts.log = zap.NewNop()
	if err := run(ctx, opts); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		stop()
		os.Exit(1)
	}
}
