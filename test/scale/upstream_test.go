package scale

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8c.io/machine-controller/sdk/bootstrap"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// upstreamEnv names the environment variable holding the path of a
// Kubermatic machine-controller binary built by
// hack/upstream-machine-controller.sh.
const upstreamEnv = "UPSTREAM_MACHINE_CONTROLLER"

// upstreamMachineDeploymentRevision is the revision upstream's
// MachineDeployment controller gives the first MachineSet of a new
// MachineDeployment; upstream creates a Machine's instance only once the
// bootstrap Secret carries the same revision.
const upstreamMachineDeploymentRevision = "1"

// upstreamCloudConfig is the bootstrap Secret's cloud-config;
// machine-controller replaces the placeholder with the Machine's name.
const upstreamCloudConfig = "#cloud-config\nhostname: <MACHINE_NAME>\n"

// upstreamResult is one scale-up by upstream's machine-controller.
type upstreamResult struct {
	replicas      int
	time          time.Duration
	userRequests  float64
	infraRequests float64
	// requests counts requests by cluster ("user" or "infra"), method and
	// status code, e.g. "user PATCH 200".
	requests map[string]float64
	peakRSS  int64
	// cpu is the CPU time upstream's process used, start-up included.
	cpu time.Duration
}

func (r upstreamResult) String() string {
	var b strings.Builder
	perMachine := func(v float64) float64 { return v / float64(r.replicas) }
	fmt.Fprintf(&b, "upstream machine-controller, %d replicas: %s, requests per Machine: user %.2f, infra %.2f, peak RSS %d MiB, CPU %.1f s (%.4f s per Machine)\n",
		r.replicas, r.time.Round(time.Millisecond), perMachine(r.userRequests), perMachine(r.infraRequests), r.peakRSS>>20,
		r.cpu.Seconds(), perMachine(r.cpu.Seconds()))
	for _, k := range slices.Sorted(maps.Keys(r.requests)) {
		fmt.Fprintf(&b, "  %s: %.2f per Machine\n", k, perMachine(r.requests[k]))
	}
	return b.String()
}

// BenchmarkScaleUpUpstream takes a MachineDeployment from 0 to
// SCALE_REPLICAS (default 1000) replicas with Kubermatic's machine-controller
// (the binary named by UPSTREAM_MACHINE_CONTROLLER) on the rig of
// BenchmarkScaleUp, with the same providerSpec and the same wait, so
// `-bench ScaleUp` runs both one after the other. Without the binary it is
// skipped. See docs/benchmarks.md.
func BenchmarkScaleUpUpstream(b *testing.B) {
	bin := os.Getenv(upstreamEnv)
	if bin == "" {
		b.Skipf("%s is not set: build upstream's machine-controller with hack/upstream-machine-controller.sh and name the binary there to run it side by side", upstreamEnv)
	}
	replicas, err := positiveFromEnv("SCALE_REPLICAS", defaultReplicas)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		res := measureUpstream(b, bin, replicas, benchTimeout)
		// The testing package keeps only 10 lines of a benchmark's log;
		// the full result goes to stdout, as BenchmarkScaleUp's does.
		fmt.Fprint(os.Stdout, res)
		b.ReportMetric(res.time.Seconds(), "s-upstream")
		b.ReportMetric(res.userRequests/float64(replicas), "user-req/machine")
		b.ReportMetric(res.infraRequests/float64(replicas), "infra-req/machine")
		b.ReportMetric(float64(res.peakRSS)/(1<<20), "peak-MiB")
		b.ReportMetric(res.cpu.Seconds()/float64(replicas), "cpu-s/machine")
	}
}

// measureUpstream runs upstream's machine-controller on a fresh rig, with
// the bootstrap Secret operating-system-manager would write, until every VM
// exists and every Machine has a nodeRef.
func measureUpstream(tb testing.TB, bin string, replicas int, timeout time.Duration) upstreamResult {
	tb.Helper()
	r := startRig(tb, replicas)
	// Upstream writes a Machine's status (its addresses, its nodeRef) with
	// an update of the whole Machine, which an API server serving the
	// status subresource silently strips of the status.
	r.user.ServeMachineStatus(tb, false)
	createBootstrapSecret(tb, r, "scale", "kube-system")
	proc := startUpstreamController(tb, bin, r)
	// A binary that does not start would otherwise only show as the
	// scale-up's timeout.
	err := poll.Wait(tb.Context(), time.Minute, func() error {
		_, _, err := proc.requestsByHost(tb.Context())
		return err
	})
	if err != nil {
		tb.Fatalf("%v\nlast lines of upstream's log:\n%s", err, proc.logTail(40))
	}
	res := upstreamResult{replicas: replicas}
	ctx, cancel := proc.untilExit(tb.Context())
	defer cancel()
	userWatch, stopUserWatch := watchKinds(tb, r.user, &clusterv1alpha1.Machine{}, &corev1.Node{})
	defer stopUserWatch()
	if res.time, _, _, err = controllerScaleUp(ctx, tb, r, userWatch, replicas, timeout); err != nil {
		tb.Fatalf("%v\nlast lines of upstream's log:\n%s", err, proc.logTail(40))
	}
	byHost, byMethod, err := proc.requestsByHost(tb.Context())
	if err != nil {
		tb.Fatal(err)
	}
	user, infra := hostOf(tb, r.user), hostOf(tb, r.infra)
	res.userRequests, res.infraRequests = byHost[user], byHost[infra]
	res.requests = map[string]float64{}
	for key, n := range byMethod {
		res.requests[strings.NewReplacer(user, "user", infra, "infra").Replace(key)] += n
	}
	if res.peakRSS, err = proc.peakRSS(); err != nil {
		tb.Fatal(err)
	}
	if res.cpu, err = proc.cpuTime(); err != nil {
		tb.Fatal(err)
	}
	proc.stop()
	r.stop(tb)
	return res
}

// createBootstrapSecret creates what operating-system-manager writes for a
// MachineDeployment and upstream's machine-controller reads before it
// creates an instance: the Secret <md>-<namespace>-bootstrap-config in
// cloud-init-settings, its cloud-config under "cloud-config", annotated with
// the MachineDeployment's revision.
func createBootstrapSecret(tb testing.TB, r *rig, machineDeployment, namespace string) {
	tb.Helper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:        fmt.Sprintf(bootstrap.CloudConfigSecretNamePattern, machineDeployment, namespace, bootstrap.BootstrapCloudConfig),
			Namespace:   bootstrap.CloudInitSettingsNamespace,
			Annotations: map[string]string{bootstrap.MachineDeploymentRevision: upstreamMachineDeploymentRevision},
		},
		Data: map[string][]byte{"cloud-config": []byte(upstreamCloudConfig)},
	}
	for _, obj := range []ctrlruntimeclient.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: bootstrap.CloudInitSettingsNamespace}},
		secret,
	} {
		if err := r.user.Client.Create(tb.Context(), obj); err != nil {
			tb.Fatalf("failed to create %s: %v", obj.GetName(), err)
		}
	}
}

// upstreamProcess is a running upstream machine-controller.
type upstreamProcess struct {
	*controllerProcess
}

// startUpstreamController runs upstream's machine-controller against the
// rig: the user cluster from -kubeconfig, the infra cluster from
// KUBEVIRT_KUBECONFIG (the providerSpec names none), VMs in the namespace
// POD_NAMESPACE names. Worker count as ours; upstream has no QPS flags, so
// its clients keep client-go's and controller-runtime's defaults. Leader
// election is off, as ours runs without it here.
func startUpstreamController(tb testing.TB, bin string, r *rig) *upstreamProcess {
	tb.Helper()
	dir := tb.TempDir()
	kubeconfig := filepath.Join(dir, "user.kubeconfig")
	if err := os.WriteFile(kubeconfig, r.user.KubeconfigBytes, 0o600); err != nil {
		tb.Fatal(err)
	}
	metricsAddr := envtest.FreeAddress(tb)
	cmd := exec.Command(bin, "-kubeconfig", kubeconfig, "-worker-count", strconv.Itoa(workers),
		"-metrics-address", metricsAddr, "-health-probe-address", envtest.FreeAddress(tb),
		"-enable-leader-election=false")
	cmd.Env = append(os.Environ(), "KUBEVIRT_KUBECONFIG="+string(r.infra.KubeconfigBytes),
		"POD_NAMESPACE="+infraNamespace, "CLUSTER_ID=", "PROJECT_ID=")
	logPath := filepath.Join(dir, "upstream-machine-controller.log")
	return &upstreamProcess{controllerProcess: runProcess(tb, cmd, metricsAddr, logPath)}
}
