package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/webhook"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// infraNamespace is the tenant cluster's namespace on the infra cluster.
const infraNamespace = "cluster-demo"

type options struct {
	example string
	once    bool
	timeout time.Duration
	workDir string
	out     io.Writer
	log     *zap.Logger
}

func (o options) stepf(format string, args ...any) {
	fmt.Fprintf(o.out, "==> "+format+"\n", args...)
}

// clusters are the two control planes of the demo.
type clusters struct {
	user  *envtest.Env
	infra *envtest.Env
}

func run(ctx context.Context, o options) (err error) {
	o.stepf("Finding or building kube-apiserver, etcd and kube-controller-manager, and KubeVirt's and CDI's own controllers, from source " +
		"(once: the first build took 9.5 minutes on an idle 2-core machine, longer on a busy one; later runs use the cache)")
	start := time.Now()
	if err := buildBinaries(ctx, o.out); err != nil {
		return err
	}
	o.stepf("Starting two local control planes, the user cluster and the KubeVirt infra cluster (kube-apiserver, etcd, kube-controller-manager); " +
		"the infra cluster runs KubeVirt's own admission and virt-controller and CDI's cdi-controller")
	cl, err := startClusters(ctx)
	if err != nil {
		return err
	}
	defer cl.stop()
	o.stepf("Control planes up %s after the start", time.Since(start).Round(time.Second))
	if err := o.writeKubeconfigs(cl); err != nil {
		return err
	}
	if err := prepareInfra(ctx, cl.infra); err != nil {
		return err
	}

	// The controllers outlive Ctrl-C: they must still run while the
	// MachineDeployment is deleted. They stop when run returns.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	const components = 4
	stopped := make(chan error, components)
	defer func() {
		cancel()
		for range components {
			err = errors.Join(err, ignoreCanceled(<-stopped))
		}
	}()
	go func() { stopped <- runWebhook(runCtx, cl, o.log) }()
	go func() { stopped <- runSimulator(runCtx, cl) }()
	go func() { stopped <- runInfraController(runCtx, cl) }()
	go func() {
		stopped <- controller.RunOptions{
			UserConfig:      cl.user.Config,
			InfraKubeconfig: cl.infra.KubeconfigBytes,
			WorkerCount:     4,
			MetricsAddress:  "0",
			HealthAddress:   "0",
			Log:             o.log,
			Getenv:          func(string) string { return "" },
		}.Run(runCtx)
	}()
	if err := waitWebhook(ctx, cl); err != nil {
		return err
	}
	o.stepf("machine-controller with its admission webhook, infra-controller and the simulated infra nodes (kubelets, virt-handlers, guests) are running")
	if err := createTenantCluster(ctx, cl); err != nil {
		return err
	}
	if err := waitTenantReady(ctx, o, cl); err != nil {
		return err
	}

	refusal, err := refuseBroken(ctx, cl.user, o.example)
	if err != nil {
		return err
	}
	o.stepf("The admission webhook refused the example with memory %q: %s", brokenMemory, refusal)
	md, err := applyExample(ctx, cl.user, o.example)
	if err != nil {
		return err
	}
	o.stepf("Applied MachineDeployment %s/%s (%d replicas) to the user cluster", md.Namespace, md.Name, replicasOf(md))
	// Interrupted while waiting, the demo still deletes and verifies.
	if err := waitReady(ctx, o, cl, md); err != nil && ctx.Err() == nil {
		return err
	}
	if !o.once && ctx.Err() == nil {
		o.stepf("Running until Ctrl-C; then the MachineDeployment is deleted and everything it made must go")
		<-ctx.Done()
	}
	cleanupCtx, cancelCleanup := context.WithTimeout(context.WithoutCancel(ctx), o.timeout)
	defer cancelCleanup()
	if err := deleteAndVerify(cleanupCtx, o, cl, md); err != nil {
		return err
	}
	return deleteTenantAndVerify(cleanupCtx, o, cl)
}

func ignoreCanceled(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func startClusters(ctx context.Context) (*clusters, error) {
	infra, err := envtest.New(ctx, envtest.WithVirtController(), envtest.WithCDIController(), envtest.WithScheduler(), envtest.WithKubeconfigNamespace(infraNamespace))
	if err != nil {
		return nil, fmt.Errorf("failed to start the infra control plane: %w", err)
	}
	user, err := envtest.New(ctx, envtest.WithControllerManager(), envtest.WithMachineWebhook())
	if err != nil {
		return nil, errors.Join(fmt.Errorf("failed to start the user control plane: %w", err), infra.Stop())
	}
	return &clusters{user: user, infra: infra}, nil
}

// runWebhook serves machine-controller's admission webhook on the user
// cluster, with the configurations the chart installs, until ctx ends. It
// logs where the controllers log.
func runWebhook(ctx context.Context, cl *clusters, log *zap.Logger) error {
	serving, _ := cl.user.MachineWebhook()
	return webhook.Options{
		UserConfig: cl.user.Config, InfraKubeconfig: cl.infra.KubeconfigBytes, InfraNamespace: infraNamespace,
		Host: serving.Host, Port: serving.Port, CertFile: serving.CertFile, KeyFile: serving.KeyFile,
		MetricsAddress: "0", HealthAddress: "0", Log: log,
		Getenv: func(string) string { return "" },
	}.Run(ctx)
}

// waitWebhook waits until the webhook serves: with the chart's
// failurePolicy Fail, no MachineDeployment is stored before.
func waitWebhook(ctx context.Context, cl *clusters) error {
	serving, _ := cl.user.MachineWebhook()
	return serving.WaitServing(ctx)
}

func (c *clusters) stop() {
	_ = c.user.Stop()
	_ = c.infra.Stop()
}

func (o options) writeKubeconfigs(cl *clusters) error {
	if err := os.MkdirAll(o.workDir, 0o700); err != nil {
		return fmt.Errorf("failed to create %s: %w", o.workDir, err)
	}
	for name, kubeconfig := range map[string][]byte{"user": cl.user.KubeconfigBytes, "infra": cl.infra.KubeconfigBytes} {
		path, err := filepath.Abs(filepath.Join(o.workDir, name+".kubeconfig"))
		if err != nil {
			return err
		}
		if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
			return fmt.Errorf("failed to write the %s kubeconfig: %w", name, err)
		}
	}
	return nil
}
