package webhook_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/webhook"
	kkpenvtest "github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/gobuild"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Load test of the webhook process: WEBHOOK_LOAD=1 runs it;
// WEBHOOK_LOAD_REPEATS (default 3) sets the repeats per payload and
// WEBHOOK_LOAD_ARGS adds flags to `machine-controller webhook`.
const (
	loadEnv        = "WEBHOOK_LOAD"
	loadRepeatsEnv = "WEBHOOK_LOAD_REPEATS"
	loadArgsEnv    = "WEBHOOK_LOAD_ARGS"
	// loadConcurrency is how many reviews are sent at once.
	loadConcurrency = 200
	// largeReviewPadding brings the review of the maximal spec just under
	// webhook.MaxReviewBytes (4 MiB): the largest review the webhook reads.
	largeReviewPadding = 4<<20 - 40<<10
	// apiServerTimeout is the chart's timeoutSeconds: an answer later than
	// this is one the API server no longer waits for.
	apiServerTimeout = 10 * time.Second
)

// TestAdmissionLoad sends 200 AdmissionReviews at once (half to the
// mutating, half to the validating path, as an API server's HTTP/2 client
// does over one connection) to a `machine-controller webhook` process
// serving HTTPS, and reports how many were answered within the API
// server's timeout, the latencies and the process's peak RSS (VmHWM), per
// repeat and as min/median/max. Each repeat starts a new process.
func TestAdmissionLoad(t *testing.T) {
	if os.Getenv(loadEnv) == "" {
		t.Skip("set " + loadEnv + "=1 to run the webhook load test")
	}
	repeats := 3
	if v := os.Getenv(loadRepeatsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive integer", loadRepeatsEnv, v)
		}
		repeats = n
	}
	e := needEnv(t)
	storageClass(t, e)
	bin := buildMachineController(t)
	for _, payload := range []struct {
		name string
		spec *runtime.RawExtension
		// padding is the size of a template annotation that makes the
		// review as large as the webhook reads.
		padding int
	}{
		{name: "red-team-10000-disks", spec: redTeamSpec(t, redTeamDisks)},
		{name: "maximal", spec: maximalSpec(t)},
		{name: "maximal-4MB-review", spec: maximalSpec(t), padding: largeReviewPadding},
	} {
		t.Run(payload.name, func(t *testing.T) {
			md := machineDeployment(t, "load")
			md.Spec.Template.Spec.ProviderSpec.Value = payload.spec
			if payload.padding > 0 {
				md.Spec.Template.Annotations = map[string]string{"example.com/padding": strings.Repeat("x", payload.padding)}
			}
			body := reviewOf(t, "load", md)
			t.Logf("payload %s: review of %d bytes, providerSpec.value %d bytes", payload.name, len(body), len(payload.spec.Raw))
			var runs []loadRun
			for i := range repeats {
				run := runLoad(t, e, bin, md)
				t.Logf("repeat %d: %s", i+1, run)
				runs = append(runs, run)
			}
			t.Logf("%s over %d repeats (min/median/max): %s", payload.name, repeats, summarize(runs))
		})
	}
}

// buildMachineController builds cmd/machine-controller into a temporary
// directory.
func buildMachineController(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "machine-controller")
	gobuild.Binary(t, gobuild.MachineController, bin)
	return bin
}

// webhookProcess is a running `machine-controller webhook`.
type webhookProcess struct {
	cmd     *exec.Cmd
	address string
	exited  chan error
	log     string
}

// startWebhookProcess runs the webhook on a free port of 127.0.0.1 with
// the control plane's serving certificate, as user and infra cluster the
// test's API server.
func startWebhookProcess(t *testing.T, e *testEnv, bin string) *webhookProcess {
	t.Helper()
	address := kkpenvtest.FreeAddress(t)
	host, port, _ := net.SplitHostPort(address)
	logPath := filepath.Join(t.TempDir(), "webhook.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"webhook", "--kubeconfig", e.kubeconfigPath, "--infra-kubeconfig", e.kubeconfigPath, "--infra-namespace", "default",
		"--host", host, "--port", port, "--tls-cert-file", e.serving.CertFile, "--tls-key-file", e.serving.KeyFile,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0"}
	args = append(args, strings.Fields(os.Getenv(loadArgsEnv))...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &webhookProcess{cmd: cmd, address: address, exited: make(chan error, 1), log: logPath}
	go func() { p.exited <- cmd.Wait(); _ = logFile.Close() }()
	t.Cleanup(p.stop)
	return p
}

// stop interrupts the process and waits until it ended.
func (p *webhookProcess) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(90 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// memory returns a field of /proc/<pid>/status in bytes (VmRSS, VmHWM).
func (p *webhookProcess) memory(name string) (int64, error) {
	return kkpenvtest.Memory(p.cmd.Process.Pid, name)
}

// loadClient is an HTTP/2 client like the API server's webhook client,
// with its timeout.
func loadClient() *http.Client {
	return &http.Client{Timeout: apiServerTimeout, Transport: &http.Transport{
		ForceAttemptHTTP2: true,
		// The serving certificate is the control plane's; this client
		// only talks to 127.0.0.1.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback load client
	}}
}

// outcome is the answer to one review.
type outcome struct {
	took time.Duration
	// kind is allowed, refused, throttled (429), failed (no review in
	// time: timeout, connection or HTTP error).
	kind string
}

// send posts one review and classifies the answer.
func send(ctx context.Context, client *http.Client, url string, body []byte, uid string) outcome {
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return outcome{kind: "failed"}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return outcome{took: time.Since(start), kind: "failed"}
	}
	defer func() { _ = resp.Body.Close() }()
	var review admissionv1.AdmissionReview
	err = json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&review)
	took := time.Since(start)
	switch {
	case err != nil || review.Response == nil || string(review.Response.UID) != uid:
		return outcome{took: took, kind: "failed"}
	case review.Response.Allowed:
		return outcome{took: took, kind: "allowed"}
	case review.Response.Result != nil && review.Response.Result.Code == http.StatusTooManyRequests:
		return outcome{took: took, kind: "throttled"}
	}
	return outcome{took: took, kind: "refused"}
}

// loadRun is what one repeat measured.
type loadRun struct {
	answered       int // within apiServerTimeout
	kinds          map[string]int
	p50, p99, slow time.Duration
	rssBefore      int64
	peakRSS        int64
}

func (r loadRun) String() string {
	return fmt.Sprintf("answered in time %d/%d %v, p50 %v, p99 %v, max %v, RSS before %.0f MB, peak RSS (VmHWM) %.0f MB",
		r.answered, loadConcurrency, r.kinds, r.p50.Round(time.Millisecond), r.p99.Round(time.Millisecond), r.slow.Round(time.Millisecond),
		mb(r.rssBefore), mb(r.peakRSS))
}

func mb(b int64) float64 { return float64(b) / 1e6 }

// runLoad starts a webhook process, waits until it checks infra facts,
// sends loadConcurrency reviews of md at once and measures.
func runLoad(t *testing.T, e *testEnv, bin string, md *clusterv1alpha1.MachineDeployment) loadRun {
	t.Helper()
	p := startWebhookProcess(t, e, bin)
	client := loadClient()
	waitWarm(t, p, client)
	var run loadRun
	var err error
	if run.rssBefore, err = p.memory("VmRSS"); err != nil {
		t.Fatal(err)
	}
	bodies := make([][]byte, loadConcurrency)
	for i := range bodies {
		bodies[i] = reviewOf(t, fmt.Sprintf("load-%d", i), md.DeepCopy())
	}
	outcomes := make([]outcome, loadConcurrency)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range loadConcurrency {
		path := webhook.ValidatePath
		if i%2 == 1 {
			path = webhook.MutatePath
		}
		wg.Go(func() {
			<-start
			outcomes[i] = send(t.Context(), client, "https://"+p.address+path, bodies[i], fmt.Sprintf("load-%d", i))
		})
	}
	close(start)
	wg.Wait()
	if run.peakRSS, err = p.memory("VmHWM"); err != nil {
		t.Fatal(err)
	}
	p.stop()
	return measure(run, outcomes)
}

// measure fills run from the outcomes: counts, p50, p99 and the slowest
// latency; a review without an answer in time counts as taking the
// timeout.
func measure(run loadRun, outcomes []outcome) loadRun {
	run.kinds = map[string]int{}
	latencies := make([]time.Duration, 0, len(outcomes))
	for _, o := range outcomes {
		run.kinds[o.kind]++
		if o.kind != "failed" && o.took <= apiServerTimeout {
			run.answered++
		} else {
			o.took = max(o.took, apiServerTimeout)
		}
		latencies = append(latencies, o.took)
	}
	slices.Sort(latencies)
	run.p50, run.p99, run.slow = latencies[len(latencies)*50/100], latencies[len(latencies)*99/100], latencies[len(latencies)-1]
	return run
}

// summarize gives min/median/max of each figure over the runs.
func summarize(runs []loadRun) string {
	figure := func(get func(loadRun) float64, format string) string {
		values := make([]float64, len(runs))
		for i, r := range runs {
			values[i] = get(r)
		}
		slices.Sort(values)
		return fmt.Sprintf(format+"/"+format+"/"+format, values[0], values[len(values)/2], values[len(values)-1])
	}
	return strings.Join([]string{
		"answered in time " + figure(func(r loadRun) float64 { return float64(r.answered) }, "%.0f"),
		"p50 " + figure(func(r loadRun) float64 { return r.p50.Seconds() }, "%.3fs"),
		"p99 " + figure(func(r loadRun) float64 { return r.p99.Seconds() }, "%.3fs"),
		"peak RSS " + figure(func(r loadRun) float64 { return mb(r.peakRSS) }, "%.0fMB"),
	}, ", ")
}

// waitWarm waits until the process serves and checks infra facts: a
// review naming a missing StorageClass is refused for it.
func waitWarm(t *testing.T, p *webhookProcess, client *http.Client) {
	t.Helper()
	md := machineDeployment(t, "warm-up")
	md.Spec.Template.Spec.ProviderSpec.Value = providerSpec(t, func(cps map[string]any) {
		cps["virtualMachine"].(map[string]any)["template"].(map[string]any)["primaryDisk"].(map[string]any)["storageClassName"] = "warm-up"
	})
	body := reviewOf(t, "warm-up", md)
	poll.Until(t, 90*time.Second, func() error {
		select {
		case err := <-p.exited:
			p.exited <- err
			log, _ := os.ReadFile(p.log)
			t.Fatalf("the webhook ended: %v: %s", err, log)
		default:
		}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "https://"+p.address+webhook.ValidatePath, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer func() { _ = resp.Body.Close() }()
		answer, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if !strings.Contains(string(answer), `StorageClass \"warm-up\" not found`) {
			return errors.New("the webhook does not check infra facts yet: " + string(answer))
		}
		return nil
	})
}
