package scale

import (
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/kkp"

	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
)

// setup is how a scale-up runs the controller.
type setup struct {
	// kkp runs our binaries as Kubermatic does (startKKP); else the
	// controller runs with this repository's command line
	// (startController).
	kkp bool
	// statusSubresource makes the Machine CRD serve the status
	// subresource, as this repository's does; Kubermatic's does not.
	statusSubresource bool
	// detectMutations is startController's.
	detectMutations bool
}

// kkpWorkers is the -worker-count of our binary under Kubermatic's
// command line, which passes none: a KKP-mode run's raw client creates as
// many Machines at once, as workers does for the other mode.
const kkpWorkers = 10

// workers is how many Machines the controller works on at once.
func (s setup) workers() int {
	if s.kkp {
		return kkpWorkers
	}
	return workers
}

// setupFromEnv reads SCALE_MODE: "kkp" runs our binaries with Kubermatic's
// command lines, webhook configuration, RBAC and Machine CRD (startKKP);
// "" or "ours" the controller with this repository's command line; and
// SCALE_MACHINE_CRD (machineStatusFromEnv), which KKP mode takes only as
// "kubermatic".
func setupFromEnv() (setup, error) {
	subresource, err := machineStatusFromEnv()
	if err != nil {
		return setup{}, err
	}
	switch v := os.Getenv("SCALE_MODE"); v {
	case "", "ours":
		return setup{statusSubresource: subresource}, nil
	case "kkp":
		if subresource && os.Getenv("SCALE_MACHINE_CRD") != "" {
			return setup{}, fmt.Errorf("SCALE_MODE=kkp runs on Kubermatic's Machine CRD: SCALE_MACHINE_CRD=%q, want kubermatic or unset", os.Getenv("SCALE_MACHINE_CRD"))
		}
		return setup{kkp: true}, nil
	default:
		return setup{}, fmt.Errorf("SCALE_MODE=%q: want ours or kkp", v)
	}
}

// controllerRun is the controller of a scale-up and what counts it.
type controllerRun struct {
	proc *controllerProcess
	// proxy stands between the controller and the user API server.
	proxy *countingProxy
	// webhook is KKP mode's webhook, else nil.
	webhook *kkpWebhook
}

// startControllerRun starts the controller on r as s says.
func startControllerRun(tb testing.TB, r *rig, s setup) controllerRun {
	tb.Helper()
	if s.kkp {
		return startKKP(tb, r)
	}
	if !s.statusSubresource {
		r.user.ServeMachineStatus(tb, false)
	}
	proxy := startProxy(tb, r.user.Config)
	return controllerRun{proc: startController(tb, r, proxy.kubeconfig(tb), s.detectMutations), proxy: proxy}
}

// startKKP sets up the user cluster as Kubermatic does (its Machine CRD
// without status subresource, its RBAC of the User machine-controller,
// operating-system-manager's bootstrap Secret) and starts our binaries
// with Kubermatic's command lines and environment, only their fixed ports
// replaced: the webhook as `webhook`, behind Kubermatic's
// MutatingWebhookConfiguration, then the controller as
// `machine-controller`. Both authenticate as machine-controller; the
// controller reaches the user cluster through the counting proxy, which
// forwards with that identity, the webhook directly. The infra kubeconfig
// comes from KUBEVIRT_KUBECONFIG, the infra namespace from POD_NAMESPACE.
// With SCALE_PROFILE_DIR set the controller also gets -enable-profiling,
// which serves its heap profile on the metrics address.
func startKKP(tb testing.TB, r *rig) controllerRun {
	tb.Helper()
	r.user.ServeMachineStatus(tb, false)
	if err := kkp.ApplyRBAC(tb.Context(), r.user.Client); err != nil {
		tb.Fatal(err)
	}
	createBootstrapSecret(tb, r, "scale", "kube-system")
	kubeconfig, err := r.user.UserKubeconfig(kkp.User, nil, "")
	if err != nil {
		tb.Fatal(err)
	}
	identity, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		tb.Fatal(err)
	}
	proxy := startProxy(tb, identity)
	cert, key, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	// What Kubermatic mounts into each pod: the user cluster's kubeconfig,
	// the CA bundle and, for the webhook, its serving certificate.
	root := tb.TempDir()
	bin, ctrlDir, webhookDir := filepath.Join(root, "bin"), filepath.Join(root, "controller"), filepath.Join(root, "webhook")
	for dir, files := range map[string]map[string][]byte{
		bin:        nil,
		ctrlDir:    {"kubeconfig": proxy.kubeconfig(tb), "ca-bundle.pem": cert},
		webhookDir: {"kubeconfig": kubeconfig, "ca-bundle.pem": cert, "cert.pem": cert, "key.pem": key},
	} {
		if err := os.Mkdir(dir, 0o755); err != nil { //nolint:gosec // the processes' uid must reach the files
			tb.Fatal(err)
		}
		if err := kkp.WriteFiles(dir, files); err != nil {
			tb.Fatal(err)
		}
	}
	controllerBin, webhookBin := kkp.Binaries(tb, bin)
	env := []string{
		"KUBEVIRT_KUBECONFIG=" + base64.StdEncoding.EncodeToString(r.infra.KubeconfigBytes),
		"POD_NAMESPACE=" + infraNamespace,
		"PROBER_KUBECONFIG=" + filepath.Join(ctrlDir, "kubeconfig"),
	}
	webhookAddr := envtest.FreeAddress(tb)
	wh := kkp.Start(tb, "webhook", webhookBin, kkp.WithAddress(kkp.WebhookArgs(webhookDir, infraNamespace), "-listen-address", webhookAddr), env)
	kkp.WaitServing(tb, wh, "https://"+webhookAddr+"/healthz", cert, time.Minute)
	kkp.InstallWebhookConfiguration(tb, r.user.Client, webhookAddr, cert, machineDeployment("webhook-probe", 0, "1.33.4"), time.Minute)

	metricsAddr := envtest.FreeAddress(tb)
	args := kkp.WithAddress(kkp.WithAddress(kkp.ControllerArgs(ctrlDir), "-health-probe-address", envtest.FreeAddress(tb)), "-metrics-address", metricsAddr)
	profile := os.Getenv(profileDirEnv) != ""
	if profile {
		args = append(args, "-enable-profiling")
	}
	proc := fromKKP(tb, kkp.Start(tb, "machine-controller", controllerBin, args, env), metricsAddr)
	if profile {
		proc.pprofAddr = metricsAddr
	}
	return controllerRun{proc: proc, proxy: proxy, webhook: &kkpWebhook{proc: wh, user: r.user}}
}

// fromKKP is the harness's view of a process kkp.Start started.
func fromKKP(tb testing.TB, p *kkp.Process, metricsAddr string) *controllerProcess {
	tb.Helper()
	return &controllerProcess{
		name: "machine-controller", pid: p.PID(), metricsAddr: metricsAddr,
		exited: p.Exited(), exitErr: p.Err,
		output: func() (string, error) { return p.Log(), nil },
		stop:   sync.OnceFunc(func() { stopKeepingLog(tb, p, "machine-controller") }),
	}
}

// stopKeepingLog stops p and, with SCALE_PROFILE_DIR set, keeps its output
// there as <name>-<time>.log.
func stopKeepingLog(tb testing.TB, p *kkp.Process, name string) {
	tb.Helper()
	p.Stop(tb)
	dir := os.Getenv(profileDirEnv)
	if dir == "" {
		return
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s.log", name, time.Now().UTC().Format("20060102T150405")))
	if err := os.WriteFile(path, []byte(p.Log()), 0o600); err != nil {
		tb.Errorf("failed to keep the output of %s: %v", name, err)
		return
	}
	tb.Logf("%s output: %s", name, path)
}
