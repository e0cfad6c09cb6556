package webhook_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"

	"github.com/kubevirt-kkp/kkp-kubevirt/charts"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/webhook"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// env is the control plane of the package's tests, with the webhook
// installed; nil when SKIP_ENVTEST=true.
var env *testEnv

type testEnv struct {
	config *rest.Config
	client ctrlruntimeclient.Client
	// warm is set once the webhook checks infra facts (see warmUp).
	warm bool
	// infraKubeconfig reaches the same API server: it plays the infra
	// cluster too (KubeVirt's and CDI's CRDs are installed).
	infraKubeconfig []byte
}

func TestMain(m *testing.M) {
	if os.Getenv("SKIP_ENVTEST") == "true" {
		os.Exit(m.Run())
	}
	ctx, cancel := context.WithCancel(context.Background())
	e, stop, err := startEnv(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	env = e
	code := m.Run()
	cancel()
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// startEnv starts kube-apiserver and etcd with the webhook configurations
// installed and the webhook serving them.
func startEnv(ctx context.Context) (*testEnv, func() error, error) {
	crds := filepath.Join("..", "..", "test", "crds")
	mutating, validating, err := chartConfigurations()
	if err != nil {
		return nil, nil, err
	}
	te := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(crds, "cluster.k8s.io.yaml"), filepath.Join(crds, "kubevirt.io.yaml"), filepath.Join(crds, "cdi.kubevirt.io.yaml"), filepath.Join(crds, "instancetype.kubevirt.io.yaml")},
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			MutatingWebhooks:   []*admissionregistrationv1.MutatingWebhookConfiguration{mutating},
			ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{validating},
		},
	}
	cfg, err := te.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("failed to start envtest: %w", err)
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = clusterv1alpha1.AddToScheme(scheme)
	client, err := ctrlruntimeclient.New(cfg, ctrlruntimeclient.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, fmt.Errorf("failed to create the client: %w", err)
	}
	admin, err := te.AddUser(envtest.User{Name: "infra-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to add the infra user: %w", err)
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("failed to write the infra kubeconfig: %w", err)
	}
	wo := te.WebhookInstallOptions
	opts := webhook.Options{
		UserConfig: cfg, InfraKubeconfig: kubeconfig, InfraNamespace: "default",
		Host: wo.LocalServingHost, Port: wo.LocalServingPort,
		CertFile: filepath.Join(wo.LocalServingCertDir, "tls.crt"), KeyFile: filepath.Join(wo.LocalServingCertDir, "tls.key"),
		MetricsAddress: "0", HealthAddress: "0",
		Getenv: func(string) string { return "" },
	}
	go func() {
		if err := opts.Run(ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	if err := waitServing(ctx, net.JoinHostPort(wo.LocalServingHost, strconv.Itoa(wo.LocalServingPort))); err != nil {
		return nil, nil, err
	}
	return &testEnv{config: cfg, client: client, infraKubeconfig: kubeconfig}, te.Stop, nil
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
	deadline := time.Now().Add(90 * time.Second)
	for {
		err := e.client.Create(t.Context(), md.DeepCopy(), ctrlruntimeclient.DryRunAll)
		if err != nil && strings.Contains(err.Error(), `StorageClass "warm-up" not found`) {
			e.warm = true
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhook does not check infra facts: %v", err)
		}
		time.Sleep(time.Second)
	}
}

// waitServing waits until address accepts TLS connections.
func waitServing(ctx context.Context, address string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", address, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only probes that the port serves
		if err == nil {
			return conn.Close()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the webhook does not serve at %s: %w", address, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// chartNamespace is the release namespace the chart is rendered for.
const chartNamespace = "kubevirt-kkp"

// chartConfigurations returns the webhook configurations the chart renders
// (default values): envtest installs exactly these.
func chartConfigurations() (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	ch, err := components.LoadChart(charts.FS, "machine-controller")
	if err != nil {
		return nil, nil, fmt.Errorf("failed to load the chart: %w", err)
	}
	vals, err := chartutil.ToRenderValues(ch, nil, chartutil.ReleaseOptions{Name: "machine-controller", Namespace: chartNamespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to build the chart's values: %w", err)
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to render the chart: %w", err)
	}
	docs := releaseutil.SplitManifests(files["machine-controller/templates/webhook-configurations.yaml"])
	m := &admissionregistrationv1.MutatingWebhookConfiguration{}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	for _, doc := range docs {
		var err error
		switch {
		case strings.Contains(doc, "kind: MutatingWebhookConfiguration"):
			err = yaml.UnmarshalStrict([]byte(doc), m)
		case strings.Contains(doc, "kind: ValidatingWebhookConfiguration"):
			err = yaml.UnmarshalStrict([]byte(doc), v)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("failed to decode a webhook configuration of the chart: %w", err)
		}
	}
	if len(m.Webhooks) != 1 || len(v.Webhooks) != 1 {
		return nil, nil, errors.New("the chart renders no webhook configurations")
	}
	return m, v, nil
}

// mutatingConfiguration is the chart's, for a test to change.
func mutatingConfiguration(t *testing.T) *admissionregistrationv1.MutatingWebhookConfiguration {
	t.Helper()
	m, _, err := chartConfigurations()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// validatingConfiguration is the chart's, for a test to change.
func validatingConfiguration(t *testing.T) *admissionregistrationv1.ValidatingWebhookConfiguration {
	t.Helper()
	_, v, err := chartConfigurations()
	if err != nil {
		t.Fatal(err)
	}
	return v
}
