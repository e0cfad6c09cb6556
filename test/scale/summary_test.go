package scale

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// defaultRepeats is how many scale-ups a benchmark run measures when
// SCALE_REPEATS is not set: one run on a shared 2-CPU machine says little,
// the spread of three does.
const defaultRepeats = 3

// defaultReplicas is the size of a benchmark run when SCALE_REPLICAS is
// not set.
const defaultReplicas = 1000

// positiveFromEnv returns the environment variable name, a positive
// integer, else def when it is not set.
func positiveFromEnv(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want a positive integer", name, v)
	}
	return n, nil
}

// machineStatusFromEnv reads SCALE_MACHINE_CRD: "kubermatic" runs our
// controller on a Machine CRD without the status subresource, as
// Kubermatic's own (and as upstream's controller runs); "" or "ours" on
// this repository's CRD, which serves it.
func machineStatusFromEnv() (subresource bool, err error) {
	switch v := os.Getenv("SCALE_MACHINE_CRD"); v {
	case "", "ours":
		return true, nil
	case "kubermatic":
		return false, nil
	default:
		return false, fmt.Errorf("SCALE_MACHINE_CRD=%q: want ours or kubermatic", v)
	}
}

// spread is the minimum, median and maximum of one figure over the
// repeats.
type spread struct {
	min, median, max float64
}

func spreadOf(values []float64) spread {
	if len(values) == 0 {
		return spread{}
	}
	s := slices.Sorted(slices.Values(values))
	median := s[len(s)/2]
	if len(s)%2 == 0 {
		median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{min: s[0], median: median, max: s[len(s)-1]}
}

func (s spread) format(verb string) string {
	return fmt.Sprintf(verb+" / "+verb+" / "+verb, s.min, s.median, s.max)
}

// summary is the spread of every figure of the repeats of one size.
type summary struct {
	replicas, repeats int
	controller, raw   spread
	// controllerVMsCreated and rawVMsCreated spread the time until every VM existed.
	controllerVMsCreated, rawVMsCreated spread
	controllerNodesReady                spread
	ratio                               spread
	user, infra                         spread
	rssMiB                              spread
	// cpuPerMachine spreads the controller's CPU seconds per Machine.
	cpuPerMachine spread
	// webhook spreads the webhook's figures in KKP mode, else nil.
	webhook *webhookSummary
	// requests spreads the requests per Machine of each cluster, method
	// and status code ("user PATCH 200"), userResources those of the user
	// cluster by verb and resource ("PATCH v1/nodes"); a key absent from
	// a repeat counts as 0 there.
	requests, userResources map[string]spread
	// results are the repeats themselves.
	results []result
}

// summarize spreads the results of repeated scale-ups of one size.
func summarize(results []result) summary {
	s := summary{repeats: len(results), requests: map[string]spread{}, userResources: map[string]spread{}, results: results}
	if len(results) == 0 {
		return s
	}
	s.replicas = results[0].replicas
	pick := func(f func(result) float64) spread {
		values := make([]float64, 0, len(results))
		for _, r := range results {
			values = append(values, f(r))
		}
		return spreadOf(values)
	}
	perMachine := func(v float64, r result) float64 { return v / float64(r.replicas) }
	s.controller = pick(func(r result) float64 { return r.controllerTime.Seconds() })
	s.raw = pick(func(r result) float64 { return r.rawTime.Seconds() })
	s.controllerVMsCreated = pick(func(r result) float64 { return r.controllerVMsCreated.Seconds() })
	s.rawVMsCreated = pick(func(r result) float64 { return r.rawVMsCreated.Seconds() })
	s.controllerNodesReady = pick(func(r result) float64 { return r.controllerNodesReady.Seconds() })
	s.ratio = pick(func(r result) float64 { return r.controllerTime.Seconds() / r.rawTime.Seconds() })
	s.user = pick(func(r result) float64 { return perMachine(r.userRequests, r) })
	s.infra = pick(func(r result) float64 { return perMachine(r.infraRequests, r) })
	s.rssMiB = pick(func(r result) float64 { return float64(r.peakRSS) / (1 << 20) })
	s.cpuPerMachine = pick(func(r result) float64 { return perMachine(r.cpu.Seconds(), r) })
	if results[0].webhook != nil {
		s.webhook = summarizeWebhook(results)
	}
	for k := range keysOf(results, func(r result) map[string]float64 { return r.requests }) {
		s.requests[k] = pick(func(r result) float64 { return perMachine(r.requests[k], r) })
	}
	for k := range keysOf(results, func(r result) map[string]float64 { return r.userResources }) {
		s.userResources[k] = pick(func(r result) float64 { return perMachine(r.userResources[k], r) })
	}
	return s
}

// keysOf returns every key of the maps field picks from the results.
func keysOf(results []result, field func(result) map[string]float64) map[string]bool {
	keys := map[string]bool{}
	for _, r := range results {
		for k := range field(r) {
			keys[k] = true
		}
	}
	return keys
}

// String renders the summary as min / median / max lines.
func (s summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d replicas, %d repeats (min / median / max):\n", s.replicas, s.repeats)
	fmt.Fprintf(&b, "  controller %s s, raw client %s s, time ratio %s\n", s.controller.format("%.1f"), s.raw.format("%.1f"), s.ratio.format("%.2f"))
	fmt.Fprintf(&b, "  every VM existed after: controller %s s, raw client %s s\n", s.controllerVMsCreated.format("%.1f"), s.rawVMsCreated.format("%.1f"))
	fmt.Fprintf(&b, "  every Node Ready after: controller %s s, raw client %s s (the raw time)\n", s.controllerNodesReady.format("%.1f"), s.raw.format("%.1f"))
	fmt.Fprintf(&b, "  requests per Machine: user %s, infra %s\n", s.user.format("%.2f"), s.infra.format("%.2f"))
	fmt.Fprintf(&b, "  controller peak RSS %s MiB\n", s.rssMiB.format("%.0f"))
	fmt.Fprintf(&b, "  controller CPU per Machine %s s\n", s.cpuPerMachine.format("%.4f"))
	if s.webhook != nil {
		b.WriteString(s.webhook.String())
	}
	for _, k := range slices.Sorted(maps.Keys(s.requests)) {
		fmt.Fprintf(&b, "  %s: %s per Machine\n", k, s.requests[k].format("%.2f"))
	}
	b.WriteString("  user cluster by resource:\n")
	for _, k := range slices.Sorted(maps.Keys(s.userResources)) {
		fmt.Fprintf(&b, "    %s: %s per Machine\n", k, s.userResources[k].format("%.2f"))
	}
	return b.String()
}

// webhookSummary is the spread of the webhook's figures over the repeats.
type webhookSummary struct {
	// calls and rejections are per Machine, the latencies in seconds.
	calls, rejections     spread
	p50, p99, mean        spread
	within25ms            spread
	rssMiB, cpuPerMachine spread
}

func summarizeWebhook(results []result) *webhookSummary {
	pick := func(f func(r result, w *webhookResult) float64) spread {
		values := make([]float64, 0, len(results))
		for _, r := range results {
			values = append(values, f(r, r.webhook))
		}
		return spreadOf(values)
	}
	n := func(r result) float64 { return float64(r.replicas) }
	return &webhookSummary{
		calls:         pick(func(r result, w *webhookResult) float64 { return w.calls / n(r) }),
		rejections:    pick(func(r result, w *webhookResult) float64 { return w.rejections / n(r) }),
		p50:           pick(func(_ result, w *webhookResult) float64 { return w.p50.Seconds() }),
		p99:           pick(func(_ result, w *webhookResult) float64 { return w.p99.Seconds() }),
		mean:          pick(func(_ result, w *webhookResult) float64 { return w.mean.Seconds() }),
		within25ms:    pick(func(_ result, w *webhookResult) float64 { return 100 * w.within25ms }),
		rssMiB:        pick(func(_ result, w *webhookResult) float64 { return float64(w.peakRSS) / (1 << 20) }),
		cpuPerMachine: pick(func(r result, w *webhookResult) float64 { return w.cpu.Seconds() / n(r) }),
	}
}

func (w webhookSummary) String() string {
	ms := func(s spread) spread { return spread{s.min * 1000, s.median * 1000, s.max * 1000} }
	var b strings.Builder
	fmt.Fprintf(&b, "  webhook, as the user API server timed its calls: p50 %s ms, p99 %s ms (interpolated in the buckets 5 / 25 / 100 ms), mean %s ms, %s %% within 25 ms\n",
		ms(w.p50).format("%.1f"), ms(w.p99).format("%.1f"), ms(w.mean).format("%.1f"), w.within25ms.format("%.1f"))
	fmt.Fprintf(&b, "  webhook calls per Machine %s, refused or failed %s; webhook peak RSS %s MiB, CPU per Machine %s s\n",
		w.calls.format("%.2f"), w.rejections.format("%.3f"), w.rssMiB.format("%.0f"), w.cpuPerMachine.format("%.4f"))
	return b.String()
}

// String renders one scale-up.
func (r result) String() string {
	return fmt.Sprintf("%d replicas: controller %s, raw client %s (ratio %.2f; every VM after %s and %s; every Node Ready after %s in the controller run), requests per Machine: user %.2f, infra %.2f, controller peak RSS %d MiB, controller CPU %.1f s (%.4f s per Machine), readiness in %d status windows, MachineSet status changes in %d",
		r.replicas, r.controllerTime.Round(time.Millisecond), r.rawTime.Round(time.Millisecond),
		r.controllerTime.Seconds()/r.rawTime.Seconds(), r.controllerVMsCreated.Round(time.Millisecond), r.rawVMsCreated.Round(time.Millisecond),
		r.controllerNodesReady.Round(time.Millisecond),
		r.userRequests/float64(r.replicas), r.infraRequests/float64(r.replicas), r.peakRSS>>20,
		r.cpu.Seconds(), r.cpu.Seconds()/float64(r.replicas), r.statusWindows, r.deploymentWindows) + webhookLine(r.webhook)
}

func webhookLine(w *webhookResult) string {
	if w == nil {
		return ""
	}
	return "; " + w.String()
}
