package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/machine"
)

// Kubermatic's defaults where they differ from the run sub-command's.
const (
	// kkpLeaseName is the lease of Kubermatic's machine-controller,
	// whatever its -name.
	kkpLeaseName = "machine-controller"
	// kkpSkipEvictionAfter is -skip-eviction-after's default: how long a
	// deleted Machine's Node is drained before deletion goes on.
	kkpSkipEvictionAfter = 2 * time.Hour
)

// envPodNamespace is the namespace of the controller's pod, which
// Kubermatic sets: its machine-controller creates the VMs of a cluster in
// the infra namespace of that name (cluster-<id>).
const envPodNamespace = "POD_NAMESPACE"

// kkpControllerFlags are the flags of Kubermatic's machine-controller.
type kkpControllerFlags struct {
	kkpCommonFlags
	workerCount             int
	healthAddress           string
	metricsAddress          string
	name                    string
	leaderElect             bool
	leaderElectionNamespace string
	joinTimeout             string
	profiling               bool
	skipEvictionAfter       time.Duration
	nodeCSRApprover         bool
}

// newKKPControllerFlags registers the flags on a new flag set.
func newKKPControllerFlags() (*kkpControllerFlags, *flag.FlagSet) {
	f := &kkpControllerFlags{}
	fs := flag.NewFlagSet("machine-controller", flag.ContinueOnError)
	f.bindCommon(fs)
	fs.IntVar(&f.workerCount, "worker-count", 10, "Machines reconciled at once (Kubermatic's default is 1; this controller's 10)")
	fs.StringVar(&f.healthAddress, "health-probe-address", "127.0.0.1:8085", "address of /healthz and /readyz")
	fs.StringVar(&f.metricsAddress, "metrics-address", "127.0.0.1:8080", "address of /metrics")
	fs.StringVar(&f.name, "name", "", `handle only Machines whose label machine.k8s.io/controller has this value ("": Machines without the label)`)
	fs.BoolVar(&f.leaderElect, "enable-leader-election", true, "elect a leader among replicas (lease "+kkpLeaseName+")")
	fs.StringVar(&f.leaderElectionNamespace, "leader-election-namespace", "kube-system", "namespace of the leader election lease")
	fs.StringVar(&f.joinTimeout, "join-cluster-timeout", "", "delete (and so replace) a MachineSet's Machine whose Node has not joined this long after creation; empty disables")
	fs.BoolVar(&f.profiling, "enable-profiling", false, "serve Go's profiles under /debug/pprof/ on the metrics address")
	fs.DurationVar(&f.skipEvictionAfter, "skip-eviction-after", kkpSkipEvictionAfter, "how long a deleted Machine's Node is drained before deletion goes on")
	fs.BoolVar(&f.nodeCSRApprover, "node-csr-approver", true, "approve the serving certificate requests of the Nodes of this controller's Machines")
	for name, why := range map[string]string{
		"bootstrap-token-service-account-name": "operating-system-manager provides the bootstrap credentials",
		"override-bootstrap-kubelet-apiserver": "operating-system-manager writes the kubelet's bootstrap kubeconfig",
		"node-port-range":                      "no firewall rules are made for KubeVirt VMs",
		"cluster-dns":                          "deprecated; operating-system-manager configures the kubelet",
		"node-http-proxy":                      "deprecated; operating-system-manager configures the node",
		"node-no-proxy":                        "deprecated; operating-system-manager configures the node",
		"node-insecure-registries":             "deprecated; operating-system-manager configures the node",
		"node-registry-mirrors":                "deprecated; operating-system-manager configures the node",
		"node-pause-image":                     "deprecated; operating-system-manager configures the node",
		"node-container-runtime":               "deprecated; operating-system-manager configures the node",
		"node-containerd-version":              "deprecated; operating-system-manager configures the node",
		"node-containerd-registry-mirrors":     "deprecated; operating-system-manager configures the node",
		"node-registry-credentials-secret":     "deprecated; operating-system-manager configures the node",
	} {
		f.noop(fs, name, false, why)
	}
	return f, fs
}

// kkpControllerOptions parses Kubermatic's command line of
// machine-controller into the options of run.
func kkpControllerOptions(args []string, getenv func(string) string, errOut io.Writer) (controller.RunOptions, *kkpCommonFlags, error) {
	f, fs := newKKPControllerFlags()
	if err := parseKKP(fs, args, errOut); err != nil {
		return controller.RunOptions{}, nil, err
	}
	join, err := durationFlag("join-cluster-timeout", f.joinTimeout)
	errs := []error{err, f.validate()}
	if f.workerCount < 1 || f.workerCount > 1000 {
		errs = append(errs, fmt.Errorf("-worker-count %d: want 1 to 1000", f.workerCount))
	}
	if f.skipEvictionAfter < 0 {
		errs = append(errs, fmt.Errorf("-skip-eviction-after %s: want a duration of 0 or more", f.skipEvictionAfter))
	}
	if err := errors.Join(errs...); err != nil {
		return controller.RunOptions{}, nil, err
	}
	cfg, err := f.userConfig("")
	if err != nil {
		return controller.RunOptions{}, nil, err
	}
	// 0 would take the run sub-command's default: an explicit 0 disables
	// the wait, as upstream skips the eviction at once.
	drain := cmp.Or(f.skipEvictionAfter, -1)
	return controller.RunOptions{
		UserConfig:              cfg,
		InfraNamespace:          getenv(envPodNamespace),
		WorkerCount:             f.workerCount,
		DrainTimeout:            drain,
		JoinTimeout:             join,
		StoppedGrace:            machine.DefaultStoppedGrace,
		Name:                    f.name,
		MetricsAddress:          f.metricsAddress,
		HealthAddress:           f.healthAddress,
		ProfileOnMetrics:        f.profiling,
		LeaderElection:          f.leaderElect,
		LeaderElectionNamespace: f.leaderElectionNamespace,
		LeaderElectionID:        kkpLeaseName,
		NodeCSRApprover:         f.nodeCSRApprover,
		Log:                     f.logger(errOut),
		Getenv:                  getenv,
	}, &f.kkpCommonFlags, nil
}
