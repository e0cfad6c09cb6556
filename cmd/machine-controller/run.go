package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/machine"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/queue"

	"k8s.io/apimachinery/pkg/types"
)

// runFlags are the flags of the run sub-command.
type runFlags struct {
	processFlags
	workerCount             int
	drainTimeout            time.Duration
	joinTimeout             time.Duration
	stoppedGrace            time.Duration
	maxRetryDelay           time.Duration
	infraNodeLabels         string
	qps                     float32
	burst                   int
	leaderElect             bool
	leaderElectionNamespace string
	pprofAddress            string
	nodeCSRApprover         bool
}

func newRunCmd(errOut io.Writer) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags]",
		Short: "Run the Machine, MachineSet and MachineDeployment controllers against a user cluster",
		Long: `run reconciles the cluster.k8s.io/v1alpha1 Machines, MachineSets and MachineDeployments of the user cluster
(MachineDeployments roll MachineSets, MachineSets keep Machines): it creates a
KubeVirt VirtualMachine on the infra cluster for every Machine, links the Node that joins, and deletes both
when the Machine goes. The infra kubeconfig comes from --infra-kubeconfig, else from the environment variable
KUBEVIRT_KUBECONFIG (YAML or base64), else from each providerSpec; with one of the first two the infra
namespace's VirtualMachines and VirtualMachineInstances are watched instead of polled.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := f.options(errOut)
			if err != nil {
				return err
			}
			return opts.Run(cmd.Context())
		},
	}
	fl := cmd.Flags()
	f.bind(fl, "default and watched infra namespace (default: the infra kubeconfig's)",
		"handle only Machines whose label machine.k8s.io/controller has this value (\"\": Machines without the label), like Kubermatic's -name")
	fl.IntVar(&f.workerCount, "worker-count", 10, "objects each controller reconciles at once")
	fl.DurationVar(&f.drainTimeout, "drain-timeout", 10*time.Minute, "how long a deleted Machine's Node is drained before deletion goes on; negative disables drains")
	fl.DurationVar(&f.joinTimeout, "join-cluster-timeout", 0, "delete (and so replace) a MachineSet's Machine whose Node has not joined this long after its creation; 0 disables")
	fl.DurationVar(&f.stoppedGrace, "instance-stopped-grace", machine.DefaultStoppedGrace, "delete (and so replace) a MachineSet's Machine whose VM has been stopped, failing or without its VMI this long; negative disables")
	fl.DurationVar(&f.maxRetryDelay, "max-retry-delay", queue.DefaultMaxRetryDelay, "longest wait before a failing Machine, MachineSet or MachineDeployment is retried (the wait doubles from 5ms); bounds how long objects wait after an infra outage")
	fl.StringVar(&f.infraNodeLabels, "infra-node-labels-configmap", "", "NAMESPACE/NAME of a ConfigMap whose key \"labels\" lists infra node label keys (comma or line separated) to copy to the Nodes of the VMs running there; read live; needs a watched infra namespace")
	fl.Float32Var(&f.qps, "qps", 50, "requests per second to the user cluster")
	fl.IntVar(&f.burst, "burst", 100, "request burst to the user cluster")
	fl.BoolVar(&f.leaderElect, "leader-elect", false, "elect a leader among replicas")
	fl.StringVar(&f.leaderElectionNamespace, "leader-election-namespace", "kube-system", "namespace of the leader election lease")
	fl.BoolVar(&f.nodeCSRApprover, "node-csr-approver", false, "approve the kubelet serving certificate requests of the Nodes of this controller's Machines (see docs/machine-controller.md)")
	fl.StringVar(&f.pprofAddress, "pprof-bind-address", "0", `Go profiles (/debug/pprof/: heap, CPU, goroutines) address ("0" disables); profiles show cached objects, so bind it to localhost`)
	return cmd
}

// options turns the flags into controller.RunOptions.
func (f *runFlags) options(errOut io.Writer) (controller.RunOptions, error) {
	cfg, infraKubeconfig, err := f.clusters()
	if err != nil {
		return controller.RunOptions{}, err
	}
	cfg.QPS, cfg.Burst = f.qps, f.burst
	var infraNodeLabels types.NamespacedName
	if f.infraNodeLabels != "" {
		ns, name, ok := strings.Cut(f.infraNodeLabels, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			return controller.RunOptions{}, fmt.Errorf("--infra-node-labels-configmap %q: want NAMESPACE/NAME", f.infraNodeLabels)
		}
		infraNodeLabels = types.NamespacedName{Namespace: ns, Name: name}
	}
	return controller.RunOptions{
		UserConfig:              cfg,
		InfraKubeconfig:         infraKubeconfig,
		InfraNamespace:          f.infraNamespace,
		WorkerCount:             f.workerCount,
		DrainTimeout:            f.drainTimeout,
		JoinTimeout:             f.joinTimeout,
		Name:                    f.name,
		StoppedGrace:            f.stoppedGrace,
		MaxRetryDelay:           f.maxRetryDelay,
		InfraNodeLabels:         infraNodeLabels,
		MetricsAddress:          f.metricsAddress,
		HealthAddress:           f.healthAddress,
		PprofAddress:            f.pprofAddress,
		NodeCSRApprover:         f.nodeCSRApprover,
		LeaderElection:          f.leaderElect,
		LeaderElectionNamespace: f.leaderElectionNamespace,
		Log:                     f.logger(errOut),
		Getenv:                  os.Getenv,
	}, nil
}
