package scale

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/gobuild"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/simulator"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// infraNamespace is the tenant namespace on the infra cluster.
const infraNamespace = "cluster-scale"

// rig is two control planes, the infra one running KubeVirt's and CDI's
// own controllers and admission, with the simulator playing the infra
// nodes and the guests.
type rig struct {
	user, infra *envtest.Env
	stopSim     func()
}

func startRig(tb testing.TB, replicas int) *rig {
	tb.Helper()
	r := &rig{
		infra: envtest.Start(tb, envtest.WithVirtController(), envtest.WithCDIController(), envtest.WithScheduler(), envtest.WithKubeconfigNamespace(infraNamespace)),
		user:  envtest.Start(tb, envtest.WithControllerManager()),
	}
	ctx := tb.Context()
	for _, obj := range []ctrlruntimeclient.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: infraNamespace}},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "standard"}, Provisioner: simulator.DefaultProvisioner},
	} {
		if err := r.infra.Client.Create(ctx, obj); err != nil {
			tb.Fatal(err)
		}
	}
	if err := r.user.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}}); ctrlruntimeclient.IgnoreAlreadyExists(err) != nil {
		tb.Fatal(err)
	}
	mgr, err := ctrl.NewManager(r.infra.Config, ctrl.Options{Scheme: r.infra.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		tb.Fatal(err)
	}
	simOpts := simulator.Options{VirtHandler: r.infra.VirtHandlerConfig, UserClient: r.user.Client, NodeCapacity: nodeCapacity(replicas)}
	if err := simulator.Add(ctx, mgr, simOpts); err != nil {
		tb.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { defer close(done); _ = mgr.Start(runCtx) }()
	r.stopSim = sync.OnceFunc(func() { cancel(); <-done })
	tb.Cleanup(r.stopSim)
	return r
}

// nodeCapacity is what each of the two simulated infra nodes offers for a
// run of the given size: room for every VM (1 CPU, 1 GiB, and KubeVirt's
// overhead) on either node, so that kube-scheduler, which accounts for
// it, spreads them by its rules and never runs out.
func nodeCapacity(replicas int) corev1.ResourceList {
	capacity := simulator.DefaultNodeCapacity()
	n := int64(replicas) + 110
	for _, name := range []corev1.ResourceName{corev1.ResourcePods, "devices.kubevirt.io/kvm", "devices.kubevirt.io/tun", "devices.kubevirt.io/vhost-net"} {
		capacity[name] = *resource.NewQuantity(n, resource.DecimalSI)
	}
	capacity[corev1.ResourceCPU] = *resource.NewQuantity(n, resource.DecimalSI)
	capacity[corev1.ResourceMemory] = *resource.NewQuantity(n*2<<30, resource.BinarySI)
	return capacity
}

// stop stops the simulator and both control planes before the test ends:
// one cdi-controller runs per machine at a time.
func (r *rig) stop(tb testing.TB) {
	tb.Helper()
	r.stopSim()
	for _, env := range []*envtest.Env{r.user, r.infra} {
		if err := env.Stop(); err != nil {
			tb.Errorf("failed to stop envtest: %v", err)
		}
	}
}

// controllerProcess is a running machine-controller binary (ours, under
// either command line, or upstream's).
type controllerProcess struct {
	// name is the binary's name, pid its process.
	name        string
	pid         int
	metricsAddr string
	// pprofAddr is where the process serves /debug/pprof/ ("" if not).
	pprofAddr string
	// stop interrupts the process and waits for it to end.
	stop func()
	// exited is closed once the process has ended; exitErr then says how.
	exited  <-chan struct{}
	exitErr func() error
	// output returns what the process printed so far.
	output func() (string, error)
}

// running returns nil while the process runs, else how it ended and the
// end of its output (a panic's message and stack).
func (p *controllerProcess) running() error {
	select {
	case <-p.exited:
	default:
		return nil
	}
	how := p.exitErr()
	if how == nil {
		how = errors.New("exit status 0")
	}
	return fmt.Errorf("%s ended early (%w); the end of its output:\n%s", p.name, how, p.logTail(100))
}

// untilExit returns a context of parent that also ends when the process
// does, so that a wait on its work ends with it instead of at its timeout.
func (p *controllerProcess) untilExit(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	go func() {
		select {
		case <-p.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// logTail returns the last n lines of the process's output.
func (p *controllerProcess) logTail(n int) string {
	out, err := p.output()
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// startController builds cmd/machine-controller and runs it against the
// rig, reaching the user cluster through userKubeconfig.
// workers is how many Machines are worked on at once in every run: the
// --worker-count of the controllers, and how many Machines the raw client
// creates at once, so that each run gives the infra cluster's pipeline
// (virt-controller, cdi-controller, the simulator) the same burst of VMs.
const workers = 20

// With detectMutations the controller's informers check, every second,
// that nothing changed an object they hold (client-go's cache mutation
// detector): a reader that mutates a cached object instead of a copy makes
// the controller panic, and running reports it. It keeps a copy of every
// object, so only small runs afford it.
func startController(tb testing.TB, r *rig, userKubeconfig []byte, detectMutations bool) *controllerProcess {
	tb.Helper()
	dir := tb.TempDir()
	bin := filepath.Join(dir, "machine-controller")
	gobuild.Binary(tb, gobuild.MachineController, bin)
	user, infra := filepath.Join(dir, "user.kubeconfig"), filepath.Join(dir, "infra.kubeconfig")
	for path, content := range map[string][]byte{user: userKubeconfig, infra: r.infra.KubeconfigBytes} {
		if err := os.WriteFile(path, content, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	metricsAddr, pprofAddr := envtest.FreeAddress(tb), envtest.FreeAddress(tb)
	cmd := exec.Command(bin, "run", "--kubeconfig", user, "--infra-kubeconfig", infra,
		"--worker-count", strconv.Itoa(workers), "--qps", "200", "--burst", "400",
		"--metrics-bind-address", metricsAddr, "--health-probe-bind-address", "0",
		"--pprof-bind-address", pprofAddr)
	cmd.Env = append(os.Environ(), "KUBEVIRT_KUBECONFIG=", "CLUSTER_ID=", "PROJECT_ID=",
		"KUBE_CACHE_MUTATION_DETECTOR="+strconv.FormatBool(detectMutations))
	p := runProcess(tb, cmd, metricsAddr, filepath.Join(dir, "controller.log"))
	p.pprofAddr = pprofAddr
	return p
}

// saveHeapProfile writes the process's heap profile, taken after a garbage
// collection, to path: what the process holds live (go tool pprof
// -sample_index=inuse_space path).
func (p *controllerProcess) saveHeapProfile(ctx context.Context, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.pprofAddr+"/debug/pprof/heap?gc=1", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("failed to get the heap profile: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("failed to get the heap profile: %s", resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("failed to read the heap profile: %w", err)
	}
	// A profile is gzipped protobuf.
	if !bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
		return fmt.Errorf("the heap profile is not gzipped (%d bytes)", len(body))
	}
	return os.WriteFile(path, body, 0o600)
}

// runProcess starts cmd with its output in logPath until the test ends;
// metricsAddr is where it serves /metrics.
func runProcess(tb testing.TB, cmd *exec.Cmd, metricsAddr, logPath string) *controllerProcess {
	tb.Helper()
	logFile, err := os.Create(logPath)
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		tb.Fatalf("failed to start %s: %v", cmd.Path, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	p := &controllerProcess{
		name: filepath.Base(cmd.Path), pid: cmd.Process.Pid, metricsAddr: metricsAddr,
		exited: exited, exitErr: func() error { return waitErr },
		output: func() (string, error) {
			out, err := os.ReadFile(logPath)
			return string(out), err
		},
	}
	p.stop = sync.OnceFunc(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		<-exited
		_ = logFile.Close()
	})
	tb.Cleanup(p.stop)
	return p
}

// peakRSS is the process's peak resident set size (VmHWM) in bytes.
func (p *controllerProcess) peakRSS() (int64, error) {
	return envtest.Memory(p.pid, "VmHWM")
}

// cpuTime is the CPU time the process has used so far.
func (p *controllerProcess) cpuTime() (time.Duration, error) {
	return envtest.CPUTime(p.pid)
}

// requestsByHost sums the controller's rest_client_requests_total by API
// server host:port, and by host, method and status code.
func (p *controllerProcess) requestsByHost(ctx context.Context) (byHost, byMethod map[string]float64, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.metricsAddr+"/metrics", nil)
	if err != nil {
		return nil, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to scrape the controller: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	byHost, byMethod = map[string]float64{}, map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "rest_client_requests_total{") {
			continue
		}
		host := labelValue(line, "host")
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return nil, nil, fmt.Errorf("bad metric line %q: %w", line, err)
		}
		byHost[host] += v
		byMethod[host+" "+labelValue(line, "method")+" "+labelValue(line, "code")] += v
	}
	return byHost, byMethod, sc.Err()
}

func labelValue(line, name string) string {
	_, rest, ok := strings.Cut(line, name+`="`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}

// hostOf is the host:port of an envtest API server, as client-go labels it.
func hostOf(tb testing.TB, env *envtest.Env) string {
	tb.Helper()
	u, err := url.Parse(env.Config.Host)
	if err != nil {
		tb.Fatal(err)
	}
	if u.Host == "" {
		return env.Config.Host
	}
	return u.Host
}
