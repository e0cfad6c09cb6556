package scale

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/kkp"

	"k8s.io/client-go/rest"
)

// admissionLatency is the user API server's histogram of the time each
// call of an admission webhook took, as the API server waits for it (TLS,
// the request, the webhook's work and the answer): the webhook under
// Kubermatic's command line serves no metrics, and this is what a write
// waits for. Its buckets end at 5, 25, 100 and 500 ms, 1, 2.5, 10 and 25 s.
const admissionLatency = "apiserver_admission_webhook_admission_duration_seconds"

// admissionRejections counts the calls of admission webhooks that refused
// or failed (error_type: calling_webhook_error, no_error with a refusal,
// apiserver_internal_error).
const admissionRejections = "apiserver_admission_webhook_rejection_count"

// kkpWebhook is KKP mode's webhook process and the user API server that
// calls it.
type kkpWebhook struct {
	proc *kkp.Process
	user *envtest.Env
	// before is the API server's histogram when the scale-up began.
	before           histogram
	rejectionsBefore float64
	cpuBefore        time.Duration
}

// stop stops the webhook (nil: nothing to stop).
func (w *kkpWebhook) stop(tb testing.TB) {
	tb.Helper()
	if w != nil {
		stopKeepingLog(tb, w.proc, "webhook")
	}
}

// webhookResult is what the webhook did in one scale-up.
type webhookResult struct {
	// calls and rejections count the API server's calls of the webhook
	// and the calls that refused or failed.
	calls, rejections float64
	// p50 and p99 are interpolated within the histogram's buckets;
	// mean is exact (sum / count).
	p50, p99, mean time.Duration
	// within25ms is the share of calls that took at most 25 ms.
	within25ms float64
	peakRSS    int64
	cpu        time.Duration
}

// begin reads the API server's figures before the scale-up; nil (the mode
// without webhook) does nothing.
func (w *kkpWebhook) begin(tb testing.TB) {
	tb.Helper()
	if w == nil {
		return
	}
	text := scrapeMetrics(tb, w.user.Config)
	w.before = parseHistogram(text, admissionLatency)
	w.rejectionsBefore = sumCounter(text, admissionRejections)
	var err error
	if w.cpuBefore, err = envtest.CPUTime(w.proc.PID()); err != nil {
		tb.Fatal(err)
	}
}

// finish returns what happened since begin; nil for nil.
func (w *kkpWebhook) finish(tb testing.TB) *webhookResult {
	tb.Helper()
	if w == nil {
		return nil
	}
	w.proc.Running(tb)
	text := scrapeMetrics(tb, w.user.Config)
	h := parseHistogram(text, admissionLatency).minus(w.before)
	res := &webhookResult{
		calls:      h.count,
		rejections: sumCounter(text, admissionRejections) - w.rejectionsBefore,
		p50:        seconds(h.quantile(0.5)),
		p99:        seconds(h.quantile(0.99)),
		within25ms: h.share(0.025),
	}
	if h.count > 0 {
		res.mean = seconds(h.sum / h.count)
	}
	cpu, err := envtest.CPUTime(w.proc.PID())
	if err != nil {
		tb.Fatal(err)
	}
	res.cpu = cpu - w.cpuBefore
	if res.peakRSS, err = envtest.Memory(w.proc.PID(), "VmHWM"); err != nil {
		tb.Fatal(err)
	}
	return res
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// scrapeMetrics returns the API server's /metrics of cfg.
func scrapeMetrics(tb testing.TB, cfg *rest.Config) string {
	tb.Helper()
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(tb.Context(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/metrics", nil)
	if err != nil {
		tb.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		tb.Fatalf("failed to scrape the API server: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("failed to scrape the API server: %s, %v", resp.Status, err)
	}
	return string(body)
}

// histogram is a Prometheus histogram summed over all its series.
type histogram struct {
	// bounds are the buckets' upper bounds, ascending, +Inf last; counts
	// the cumulative counts of each.
	bounds, counts []float64
	sum, count     float64
}

// parseHistogram sums every series of the histogram name in text (the
// Prometheus text format).
func parseHistogram(text, name string) histogram {
	buckets := map[float64]float64{}
	var h histogram
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		v, ok := sampleValue(line)
		switch {
		case !ok:
		case strings.HasPrefix(line, name+"_bucket{"):
			le, err := strconv.ParseFloat(labelValue(line, "le"), 64)
			if err == nil {
				buckets[le] += v
			}
		case strings.HasPrefix(line, name+"_sum"):
			h.sum += v
		case strings.HasPrefix(line, name+"_count"):
			h.count += v
		}
	}
	for le := range buckets {
		h.bounds = append(h.bounds, le)
	}
	slices.Sort(h.bounds)
	for _, le := range h.bounds {
		h.counts = append(h.counts, buckets[le])
	}
	return h
}

// sumCounter sums every series of the counter name in text.
func sumCounter(text, name string) float64 {
	total := 0.0
	for line := range strings.Lines(text) {
		if v, ok := sampleValue(strings.TrimSpace(line)); ok && (strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ")) {
			total += v
		}
	}
	return total
}

// sampleValue is the value of a sample line, false for comments.
func sampleValue(line string) (float64, bool) {
	if line == "" || line[0] == '#' {
		return 0, false
	}
	fields := strings.Fields(line)
	v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
	return v, err == nil
}

// minus is h without what before had counted (the same buckets).
func (h histogram) minus(before histogram) histogram {
	out := histogram{bounds: h.bounds, counts: slices.Clone(h.counts), sum: h.sum - before.sum, count: h.count - before.count}
	for i, le := range before.bounds {
		if j := slices.Index(out.bounds, le); j >= 0 {
			out.counts[j] -= before.counts[i]
		}
	}
	return out
}

// quantile is the q-quantile, interpolated linearly within its bucket as
// Prometheus' histogram_quantile does (the first bucket from 0); in the
// +Inf bucket it is the highest finite bound. NaN without observations.
func (h histogram) quantile(q float64) float64 {
	if len(h.counts) == 0 || h.counts[len(h.counts)-1] == 0 {
		return math.NaN()
	}
	rank := q * h.counts[len(h.counts)-1]
	i := 0
	for i < len(h.counts)-1 && h.counts[i] < rank {
		i++
	}
	if math.IsInf(h.bounds[i], 1) {
		return h.bounds[max(0, i-1)]
	}
	lower, below := 0.0, 0.0
	if i > 0 {
		lower, below = h.bounds[i-1], h.counts[i-1]
	}
	return lower + (h.bounds[i]-lower)*(rank-below)/(h.counts[i]-below)
}

// share is the fraction of observations of at most bound (a bucket's).
func (h histogram) share(bound float64) float64 {
	i := slices.Index(h.bounds, bound)
	if i < 0 || h.counts[len(h.counts)-1] == 0 {
		return math.NaN()
	}
	return h.counts[i] / h.counts[len(h.counts)-1]
}

// String renders the webhook's figures of one scale-up.
func (w webhookResult) String() string {
	return fmt.Sprintf("webhook: %.0f calls (%.0f refused or failed), p50 %s, p99 %s (interpolated in the API server's buckets), mean %s, %.1f %% within 25 ms, peak RSS %d MiB, CPU %.1f s",
		w.calls, w.rejections, w.p50.Round(100*time.Microsecond), w.p99.Round(100*time.Microsecond), w.mean.Round(100*time.Microsecond),
		100*w.within25ms, w.peakRSS>>20, w.cpu.Seconds())
}
