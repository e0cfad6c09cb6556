package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/webhook"
	kkpenvtest "github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/client-go/rest"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// env is the control plane of the package's tests, with the webhook
// installed and serving, set once a test asked for it (needEnv).
var (
	env     *testEnv
	cluster = kkpenvtest.NewShared(startWebhook, kkpenvtest.WithMachineWebhook(),
		kkpenvtest.WithCRDFiles("cluster.k8s.io.yaml", "kubevirt.io.yaml", "cdi.kubevirt.io.yaml", "instancetype.kubevirt.io.yaml"))
)

type testEnv struct {
	config *rest.Config
	client ctrlruntimeclient.Client
	// warm is set once the webhook checks infra facts (see warmUp).
	warm bool
	// infraKubeconfig reaches the same API server: it plays the infra
	// cluster too (KubeVirt's and CDI's CRDs are installed).
	infraKubeconfig []byte
	// kubeconfigPath is a file holding infraKubeconfig, an admin
	// kubeconfig of the API server.
	kubeconfigPath string
	// serving is the certificate the webhooks are served with.
	serving kkpenvtest.WebhookServing
}

func TestMain(m *testing.M) { kkpenvtest.Main(m, cluster) }

// needEnv returns the package's control plane, starting it on first use;
// it skips the test when SKIP_ENVTEST=true.
func needEnv(t *testing.T) *testEnv {
	t.Helper()
	cluster.Env(t)
	return env
}

// startWebhook runs the webhook serving the configurations the control
// plane installed until the control plane stops, and waits until it
// serves.
func startWebhook(te *kkpenvtest.Env) error {
	serving, _ := te.MachineWebhook()
	opts := webhook.Options{
		UserConfig: te.Config, InfraKubeconfig: te.KubeconfigBytes, InfraNamespace: "default",
		Host: serving.Host, Port: serving.Port, CertFile: serving.CertFile, KeyFile: serving.KeyFile,
		MetricsAddress: "0", HealthAddress: "0",
		Getenv: func(string) string { return "" },
	}
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan error, 1)
	go func() {
		exited <- opts.Run(ctx)
		// A webhook that ended by itself ends the wait below too.
		cancel()
	}()
	// Stopping the control plane first ends the webhook and waits for it,
	// so that nothing of it is left running; its error is the stop's.
	te.OnStop(func() error {
		cancel()
		if err := <-exited; err != nil {
			return fmt.Errorf("the webhook ended with an error: %w", err)
		}
		return nil
	})
	if err := serving.WaitServing(ctx); err != nil {
		return err
	}
	env = &testEnv{config: te.Config, client: te.Client, infraKubeconfig: te.KubeconfigBytes, kubeconfigPath: te.KubeconfigPath, serving: serving}
	return nil
}

// warmUp waits until the webhook checks infra facts (its infra informers
// synced: a dry run of a MachineDeployment naming a missing StorageClass is
// refused), so that first syncs on a loaded machine, or the pause after an
// infra cluster did not answer in time, do not decide the tests.
func warmUp(t *testing.T, e *testEnv) {
	t.Helper()
	if e.warm {
		return
	}
	md := machineDeployment(t, "warm-up")
	md.Spec.Template.Spec.ProviderSpec.Value = providerSpec(t, func(cps map[string]any) {
		cps["virtualMachine"].(map[string]any)["template"].(map[string]any)["primaryDisk"].(map[string]any)["storageClassName"] = "warm-up"
	})
	poll.Until(t, 90*time.Second, func() error {
		err := e.client.Create(t.Context(), md.DeepCopy(), ctrlruntimeclient.DryRunAll)
		switch {
		case err == nil:
			return errors.New("the webhook does not check infra facts: the dry run was admitted")
		case !strings.Contains(err.Error(), `StorageClass "warm-up" not found`):
			return fmt.Errorf("the webhook does not check infra facts: %w", err)
		}
		return nil
	})
	e.warm = true
}

// chartNamespace is the release namespace kubevirt-installer installs the
// machine-controller chart to, which the installed configurations name.
const chartNamespace = "kubevirt-kkp-machines"

// mutatingConfiguration is the chart's, for a test to change.
func mutatingConfiguration(t *testing.T) *admissionregistrationv1.MutatingWebhookConfiguration {
	t.Helper()
	m, _, err := kkpenvtest.MachineWebhookConfigurations()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// validatingConfiguration is the chart's, for a test to change.
func validatingConfiguration(t *testing.T) *admissionregistrationv1.ValidatingWebhookConfiguration {
	t.Helper()
	_, v, err := kkpenvtest.MachineWebhookConfigurations()
	if err != nil {
		t.Fatal(err)
	}
	return v
}
