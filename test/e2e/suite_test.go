package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/webhook"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/simulator"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// infraNamespace is the tenant namespace on the infra cluster.
const infraNamespace = "tenant"

// infraNodes are the simulated infra nodes: three, so that VMs drained off
// two nodes still find one.
var infraNodes = []string{simulator.NodeName, simulator.SecondNodeName, "infra-node-sim-3"}

// machineNamespace is where Machines live in the user cluster.
const machineNamespace = metav1.NamespaceSystem

// suite is the two clusters with everything running on them.
type suite struct {
	user  *envtest.Env
	infra *envtest.Env
	// infraProxy carries the controller's connections to the infra cluster.
	infraProxy *proxy
	// run configures machine-controller; stopController stops the running
	// one (see startController).
	run            controller.RunOptions
	stopController func()
	// top is the suite's test, which outlives its subtests.
	top *testing.T
	// logs holds what the controller and the webhook log (see report).
	logs *logBuffer
}

// startSuite starts both control planes, prepares the infra cluster,
// and runs the simulator and the controllers until the test ends.
func startSuite(t *testing.T) *suite {
	t.Helper()
	s := &suite{top: t, logs: &logBuffer{}}
	// controller-runtime's global logger, which the controllers' own Run
	// sets too, before the control planes log through it: unset for 30 s,
	// it prints a stack trace.
	log := s.controllerLog(t)
	ctrl.SetLogger(zapr.NewLogger(log))
	// The infra cluster runs KubeVirt's and CDI's own controllers and
	// admission; the simulator plays its nodes, kubelets, scheduler,
	// provisioner, virt-handlers and guests.
	s.infra = envtest.Start(t, envtest.WithVirtController(), envtest.WithCDIController(), envtest.WithScheduler(), envtest.WithKubeconfigNamespace(infraNamespace))
	s.user = envtest.Start(t, envtest.WithControllerManager(), envtest.WithMachineWebhook())
	if err := prepareInfra(t.Context(), s.infra.Client); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	webhookDone := s.startWebhook(ctx, t)
	infraMgr, err := ctrl.NewManager(s.infra.Config, ctrl.Options{Scheme: s.infra.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	simOpts := simulator.Options{
		Nodes: infraNodes, VirtHandler: s.infra.VirtHandlerConfig, ImportDelay: 200 * time.Millisecond, StartDelay: 200 * time.Millisecond,
		UserClient: s.user.Client,
	}
	if err := simulator.Add(t.Context(), infraMgr, simOpts); err != nil {
		t.Fatal(err)
	}
	infraKubeconfig, err := throughProxy(s.infra.KubeconfigBytes, func(target string) string {
		s.infraProxy = startProxy(t, target)
		return s.infraProxy.ln.Addr().String()
	})
	if err != nil {
		t.Fatal(err)
	}
	s.run = controller.RunOptions{
		Log:             log,
		UserConfig:      exemptConfig(t, s.user.Config),
		InfraKubeconfig: infraKubeconfig,
		WorkerCount:     4,
		StoppedGrace:    stoppedGrace,
		InfraNodeLabels: types.NamespacedName{Namespace: machineNamespace, Name: infraNodeLabelsConfigMap},
		Getenv:          func(string) string { return "" },
		// The process may have registered the controllers before: a
		// restart below, or an earlier run of the suite (go test -count).
		SkipNameValidation: true,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := infraMgr.Start(ctx); err != nil {
			t.Errorf("simulator stopped: %v", err)
		}
	}()
	s.startController(t)
	t.Cleanup(func() {
		s.stopController()
		cancel()
		<-done
		<-webhookDone
	})
	return s
}

// startWebhook serves machine-controller's admission webhook on the user
// cluster, as the chart installs it, until ctx ends; the returned channel
// closes when it stopped. It reaches the infra cluster directly, not
// through the proxy the outage tests cut: an unreachable infra cluster
// only makes it admit on the spec's syntax (pkg/webhook tests that).
func (s *suite) startWebhook(ctx context.Context, t *testing.T) <-chan struct{} {
	t.Helper()
	serving, _ := s.user.MachineWebhook()
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := webhook.Options{
			UserConfig: s.user.Config, InfraKubeconfig: s.infra.KubeconfigBytes, InfraNamespace: infraNamespace,
			Host: serving.Host, Port: serving.Port, CertFile: serving.CertFile, KeyFile: serving.KeyFile,
			MetricsAddress: "0", HealthAddress: "0", Log: s.controllerLog(t),
			Getenv: func(string) string { return "" },
		}.Run(ctx)
		if err != nil {
			t.Errorf("the webhook stopped: %v", err)
		}
	}()
	if err := serving.WaitServing(ctx); err != nil {
		t.Fatal(err)
	}
	return done
}

// startController runs machine-controller until stopController; t is the
// suite's test, which outlives every restart.
func (s *suite) startController(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	run := s.run
	go func() {
		defer close(done)
		if err := run.Run(ctx); err != nil {
			t.Errorf("machine-controller stopped: %v", err)
		}
	}()
	s.stopController = func() {
		cancel()
		<-done
		s.stopController = nil
	}
	// Later starts register the same controllers again in this process.
	s.run.SkipNameValidation = true
}

// exemptUser is the machine-controller's ServiceAccount in the namespace
// kubevirt-installer installs it to, which the chart exempts from the
// webhook (the controller's own writes, e.g. MachineSets of a template
// that was admitted before the webhook was installed, never wait for it).
const exemptUser = "system:serviceaccount:kubevirt-kkp-machines:machine-controller"

// exemptConfig acts as exemptUser with an admin's permissions. It fails
// the test when the chart's webhooks do not exempt that user.
func exemptConfig(t *testing.T, admin *rest.Config) *rest.Config {
	t.Helper()
	if err := chartExempts(); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: exemptUser, Groups: []string{"system:masters"}}
	return cfg
}

// chartExempts checks, once per test binary since it renders the chart,
// that the chart's webhooks exempt exemptUser.
var chartExempts = sync.OnceValue(func() error {
	mutating, validating, err := envtest.MachineWebhookConfigurations()
	if err != nil {
		return err
	}
	for _, conditions := range [][]admissionregistrationv1.MatchCondition{mutating.Webhooks[0].MatchConditions, validating.Webhooks[0].MatchConditions} {
		if len(conditions) != 1 || !strings.Contains(conditions[0].Expression, `"`+exemptUser+`"`) {
			return fmt.Errorf("the chart's webhooks do not exempt %s: %v", exemptUser, conditions)
		}
	}
	return nil
})

// exemptClient is a client of exemptConfig: what it writes is stored
// unchecked, as if the webhook were not installed.
func (s *suite) exemptClient(t *testing.T) ctrlruntimeclient.Client {
	t.Helper()
	c, err := ctrlruntimeclient.New(exemptConfig(t, s.user.Config), ctrlruntimeclient.Options{Scheme: s.user.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// prepareInfra creates what an infra admin provides: the tenant namespace
// and a default StorageClass (cdi-controller makes its StorageProfile).
func prepareInfra(ctx context.Context, c ctrlruntimeclient.Client) error {
	objs := []ctrlruntimeclient.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: infraNamespace}},
		&storagev1.StorageClass{
			ObjectMeta:  metav1.ObjectMeta{Name: "standard", Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
			Provisioner: simulator.DefaultProvisioner,
		},
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("failed to create %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

// waitFor polls cond until it holds, failing the test after timeout with
// the last state cond described.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	poll.Until(t, timeout, func() error {
		if ok, state := cond(); !ok {
			return fmt.Errorf("waiting for %s; last state: %s", what, state)
		}
		return nil
	})
}

// controllerLog is the log of machine-controller and its webhook: kept in
// s.logs for the report of a failed subtest, and also written to the file
// E2E_CONTROLLER_LOG names, when set.
func (s *suite) controllerLog(t *testing.T) *zap.Logger {
	t.Helper()
	sink := zapcore.WriteSyncer(s.logs)
	if path := os.Getenv("E2E_CONTROLLER_LOG"); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatalf("failed to open the controller log: %v", err)
		}
		t.Cleanup(func() { _ = f.Close() })
		sink = zapcore.NewMultiWriteSyncer(s.logs, f)
	}
	encoder := zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig())
	return zap.New(zapcore.NewCore(encoder, sink, zapcore.DebugLevel))
}
