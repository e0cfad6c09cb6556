package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
)

// infraNamespace is the tenant cluster's namespace on the infra cluster.
const infraNamespace = "cluster-demo"

type options struct {
	example string
	once    bool
	timeout time.Duration
	workDir string
	out     io.Writer
	log     *zap.SugaredLogger
}

func (o options) step(format string, args ...any) {
	fmt.Fprintf(o.out, "==> "+format+"\n", args...)
}

func run(ctx context.Context, o options) error {
	o.step("Starting the local infra cluster (kube-apiserver, etcd, kube-controller-manager; built from source on first use, which takes a few minutes)")
	start := time.Now()
	env, err := envtest.New(ctx, envtest.WithControllerManager(), envtest.WithKubeconfigNamespace(infraNamespace))
	if err != nil {
		return fmt.Errorf("failed to start the control plane: %w", err)
	}
	defer func() { _ = env.Stop() }()
	o.step("Control plane up in %s", time.Since(start).Round(time.Second))

	kubeconfigPath, err := writeKubeconfig(o.workDir, env.KubeconfigBytes)
	if err != nil {
		return err
	}
	if err := prepareInfra(ctx, env); err != nil {
		return err
	}
	stopSim, err := startSimulator(ctx, env)
	if err != nil {
		return err
	}
	defer stopSim()

	machines, err := createMachines(ctx, env, o.example)
	if err != nil {
		return err
	}
	o.step("Created %d Machines of %s in the user cluster", len(machines), o.example)

	clients, err := infra.NewClients(infra.Options{UserAgent: "kubevirt-demo"})
	if err != nil {
		return err
	}
	defer clients.Stop()
	encoded := base64.StdEncoding.EncodeToString(env.KubeconfigBytes)
	provider := kubevirt.New(kubevirt.Options{
		Clients: clients,
		Client:  env.Client,
		Getenv: func(key string) string {
			if key == "KUBEVIRT_KUBECONFIG" {
				return encoded
			}
			return ""
		},
	})
	data := &cloudprovider.ProviderData{Client: env.Client}

	runErr := createAndWait(ctx, o, provider, data, machines)
	if runErr == nil {
		fmt.Fprintf(o.out, "\nInspect the infra cluster with:\n  kubectl --kubeconfig %s get virtualmachines,virtualmachineinstances,datavolumes,secrets -n %s\n", kubeconfigPath, infraNamespace)
		if !o.once {
			o.step("Running until Ctrl-C; then every VM, DataVolume and Secret is deleted")
			<-ctx.Done()
		}
	}
	cleanupCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	return errors.Join(runErr, cleanup(cleanupCtx, o, env, provider, data, machines))
}

func writeKubeconfig(dir string, kubeconfig []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("failed to create %s: %w", dir, err)
	}
	path, err := filepath.Abs(filepath.Join(dir, "infra.kubeconfig"))
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		return "", fmt.Errorf("failed to write the kubeconfig: %w", err)
	}
	return path, nil
}

// machineList is what createMachines made, in order.
type machineList []*clusterv1alpha1.Machine
