package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/simulator"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
}

// startSuite starts both control planes, prepares the infra cluster,
// and runs the simulator and the controllers until the test ends.
func startSuite(t *testing.T) *suite {
	t.Helper()
	s := &suite{top: t}
	// The infra cluster runs KubeVirt's and CDI's own controllers and
	// admission; the simulator plays its nodes, kubelets, scheduler,
	// provisioner, virt-handlers and guests.
	s.infra = envtest.Start(t, envtest.WithVirtController(), envtest.WithCDIController(), envtest.WithKubeconfigNamespace(infraNamespace))
	s.user = envtest.Start(t, envtest.WithControllerManager())
	if err := prepareInfra(t.Context(), s.infra.Client); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
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
		Log:             controllerLog(t),
		UserConfig:      s.user.Config,
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
	})
	return s
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
	}
	// Later starts register the same controllers again in this process.
	s.run.SkipNameValidation = true
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
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last state: %s", timeout, what, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// controllerLog writes machine-controller's log to the file E2E_CONTROLLER_LOG
// names, for looking into a failure; without it the log is dropped.
func controllerLog(t *testing.T) *zap.Logger {
	t.Helper()
	path := os.Getenv("E2E_CONTROLLER_LOG")
	if path == "" {
		return nil
	}
	cfg := zap.NewDevelopmentConfig()
	cfg.OutputPaths = []string{path}
	log, err := cfg.Build()
	if err != nil {
		t.Fatalf("failed to open the controller log: %v", err)
	}
	t.Cleanup(func() { _ = log.Sync() })
	return log
}
