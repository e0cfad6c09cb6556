package infracontroller_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/flavors"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// writeVerbs are the requests that change something.
var writeVerbs = []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// propagation is a fleet of tenant namespaces with the controller running
// and a preset "bench" in the source namespace.
type propagation struct {
	infra   *envtest.Env
	ctrl    *running
	counter *envtest.RequestCounter
	n       int
	cpu     int
}

// result is one measured change.
type result struct {
	// toLastCopy is the time from the source update to the last copy
	// carrying the change.
	toLastCopy time.Duration
	// writes are the controller's write requests for the change.
	writes map[envtest.Request]int
	// requests counts all its requests for the change, reads included.
	requests int
	// resync counts all its requests when every namespace is resynced
	// with nothing changed.
	resync map[envtest.Request]int
	// serverCPU and ownCPU are the CPU time the API server and this
	// process (the controller and the benchmark's watch) spent from the
	// update of the source to the idle controller.
	serverCPU, ownCPU time.Duration
}

// limits are the client-side rate limit of the controller's client and the
// workers of the flavor controller.
type limits struct {
	name    string
	qps     float32
	burst   int
	workers int
}

// defaultLimits are the command's defaults.
var defaultLimits = limits{
	name:    fmt.Sprintf("defaults: qps=%d burst=%d workers=%d", infracontroller.DefaultKubeAPIQPS, infracontroller.DefaultKubeAPIBurst, flavors.DefaultWorkers),
	qps:     infracontroller.DefaultKubeAPIQPS,
	burst:   infracontroller.DefaultKubeAPIBurst,
	workers: flavors.DefaultWorkers,
}

// oldLimits are the command's defaults before they were raised for preset
// propagation.
var oldLimits = limits{name: "before: qps=50 burst=100 workers=8", qps: 50, burst: 100, workers: 8}

// newPropagation starts a control plane, n tenant namespaces and the
// controller (presets only, with limits l), and waits for the initial
// copies.
func newPropagation(tb testing.TB, n int, l limits) *propagation {
	tb.Helper()
	infra := envtest.Start(tb, envtest.WithCRDFiles("kubevirt.io.yaml"))
	ctx := context.Background()
	for i := range n {
		createTenant(tb, infra.Client, fmt.Sprintf("cluster-bench-%04d", i), nil)
	}
	if err := infra.Client.Create(ctx, object(flavors.PresetGVK, "default", "bench", nil, presetSpec("1"))); err != nil {
		tb.Fatal(err)
	}
	o := infracontroller.DefaultOptions()
	o.EnableStorageClasses, o.EnableCSIAccess, o.EnableNetworkPolicies = false, false, false
	o.Flavors.Instancetypes, o.Flavors.Preferences = false, false
	o.Flavors.MaxConcurrentReconciles = l.workers
	p := &propagation{infra: infra, counter: envtest.NewRequestCounter(), n: n, cpu: 1}
	cfg := rest.CopyConfig(infra.Config)
	cfg.QPS, cfg.Burst = l.qps, l.burst
	p.ctrl = startController(tb, cfg, o, p.counter, 0)
	poll.Until(tb, 5*time.Minute, func() error { return p.copies(ctx, "1") })
	quiesce(tb, p.ctrl)
	return p
}

// copies checks that every tenant namespace holds a bench copy with cpu.
func (p *propagation) copies(ctx context.Context, cpu string) error {
	var list unstructured.UnstructuredList
	list.SetGroupVersionKind(flavors.PresetGVK.GroupVersion().WithKind("VirtualMachineInstancePresetList"))
	if err := p.infra.Client.List(ctx, &list, ctrlruntimeclient.MatchingLabels{tenant.ManagedByLabel: tenant.ManagedByValue}); err != nil {
		return err
	}
	done := 0
	for _, item := range list.Items {
		if item.GetName() == "bench" && cmp.Equal(item.Object["spec"], presetSpec(cpu)) {
			done++
		}
	}
	if done != p.n {
		return fmt.Errorf("%d of %d copies carry cpu %s", done, p.n, cpu)
	}
	return nil
}

// watchCopies closes the returned channel once every tenant namespace
// holds a bench copy with cpu. It follows a watch of our presets instead
// of polling LISTs, which would load the API server it measures; a watch
// that ends early is started again.
func (p *propagation) watchCopies(tb testing.TB, cpu string) <-chan struct{} {
	tb.Helper()
	c, err := ctrlruntimeclient.NewWithWatch(p.infra.Config, ctrlruntimeclient.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !p.followCopies(c, cpu) {
			if p.copies(context.Background(), cpu) == nil {
				return
			}
		}
	}()
	return done
}

// followCopies watches our presets until every bench copy carries cpu
// (true) or the watch ends (false).
func (p *propagation) followCopies(c ctrlruntimeclient.WithWatch, cpu string) bool {
	var list unstructured.UnstructuredList
	list.SetGroupVersionKind(flavors.PresetGVK.GroupVersion().WithKind("VirtualMachineInstancePresetList"))
	w, err := c.Watch(context.Background(), &list, ctrlruntimeclient.MatchingLabels{tenant.ManagedByLabel: tenant.ManagedByValue})
	if err != nil {
		time.Sleep(50 * time.Millisecond)
		return false
	}
	defer w.Stop()
	carrying := map[string]bool{}
	for event := range w.ResultChan() {
		obj, ok := event.Object.(*unstructured.Unstructured)
		if !ok || obj.GetName() != "bench" {
			continue
		}
		carrying[obj.GetNamespace()] = cmp.Equal(obj.Object["spec"], presetSpec(cpu))
		if countTrue(carrying) == p.n {
			return true
		}
	}
	return false
}

func countTrue(m map[string]bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}

// change updates the bench preset and measures its propagation and a
// resync with nothing changed.
func (p *propagation) change(tb testing.TB) result {
	tb.Helper()
	ctx := context.Background()
	p.cpu++
	cpu := strconv.Itoa(p.cpu)
	p.counter.Reset()
	src, err := get(ctx, p.infra.Client, flavors.PresetGVK, "default", "bench")
	if err != nil {
		tb.Fatal(err)
	}
	src.Object["spec"] = presetSpec(cpu)
	arrived := p.watchCopies(tb, cpu)
	serverStart, ownStart := cpuTimes(tb)
	start := time.Now()
	if err := p.infra.Client.Update(ctx, src); err != nil {
		tb.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(5 * time.Minute):
		tb.Fatalf("the change did not reach every copy: %v", p.copies(ctx, cpu))
	}
	r := result{toLastCopy: time.Since(start)}
	quiesce(tb, p.ctrl)
	serverEnd, ownEnd := cpuTimes(tb)
	r.serverCPU, r.ownCPU = serverEnd-serverStart, ownEnd-ownStart
	r.writes = writesOf(p.counter)
	r.requests = p.counter.Total()

	// A resync with nothing changed: an annotation on the source preset
	// is neither copied nor compared, but enqueues every namespace.
	p.counter.Reset()
	before := p.ctrl.controllers.Flavors.Reconciles()
	if src, err = get(ctx, p.infra.Client, flavors.PresetGVK, "default", "bench"); err != nil {
		tb.Fatal(err)
	}
	src.SetAnnotations(map[string]string{"touched": cpu})
	if err := p.infra.Client.Update(ctx, src); err != nil {
		tb.Fatal(err)
	}
	poll.Until(tb, 5*time.Minute, func() error {
		if got := p.ctrl.controllers.Flavors.Reconciles() - before; got < uint64(p.n) {
			return fmt.Errorf("%d of %d namespaces resynced", got, p.n)
		}
		return nil
	})
	quiesce(tb, p.ctrl)
	r.resync = p.counter.Counts()
	return r
}

// cpuTimes returns the CPU time the kube-apiserver this process started
// and this process itself have used so far.
func cpuTimes(tb testing.TB) (server, own time.Duration) {
	tb.Helper()
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		tb.Fatal(err)
	}
	own = time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
	processes, err := envtest.Descendants(os.Getpid())
	if err != nil {
		tb.Fatal(err)
	}
	for _, proc := range processes {
		if proc.Name != "kube-apiserver" {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", proc.PID))
		if err != nil {
			tb.Fatal(err)
		}
		// utime and stime are fields 14 and 15, in clock ticks (100 per
		// second on Linux); the name in parentheses may hold spaces.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		ticks := 0
		for _, f := range fields[11:13] {
			n, err := strconv.Atoi(f)
			if err != nil {
				tb.Fatal(err)
			}
			ticks += n
		}
		server += time.Duration(ticks) * 10 * time.Millisecond
	}
	return server, own
}

func writesOf(c *envtest.RequestCounter) map[envtest.Request]int {
	out := map[envtest.Request]int{}
	for req, n := range c.Counts() {
		for _, verb := range writeVerbs {
			if req.Verb == verb {
				out[req] += n
			}
		}
	}
	return out
}

func TestPresetPropagation(t *testing.T) {
	const n = 25
	p := newPropagation(t, n, defaultLimits)
	for i := range 2 {
		t.Run(fmt.Sprintf("change %d", i+1), func(t *testing.T) {
			r := p.change(t)
			want := map[envtest.Request]int{{Verb: http.MethodPatch, Resource: "kubevirt.io/v1/virtualmachineinstancepresets"}: n}
			if diff := cmp.Diff(want, r.writes); diff != "" {
				t.Errorf("writes for one change (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[envtest.Request]int{}, r.resync); diff != "" {
				t.Errorf("requests of a resync with nothing changed (-want +got):\n%s", diff)
			}
			t.Logf("%d namespaces: last copy after %s", n, r.toLastCopy)
		})
	}
}

// BenchmarkPresetPropagation changes one preset in the source namespace
// three times and measures each propagation to 500 tenant namespaces, with
// the command's default limits and with the ones before them, side by side
// in one run. It reports the minimum, median and maximum time to the last
// copy and writes per change.
func BenchmarkPresetPropagation(b *testing.B) {
	const n, runs = 500, 3
	for _, l := range []limits{oldLimits, defaultLimits} {
		b.Run(l.name, func(b *testing.B) {
			p := newPropagation(b, n, l)
			var results []result
			for b.Loop() {
				for range runs {
					results = append(results, p.change(b))
				}
			}
			reportPropagation(b, n, results)
		})
	}
}

// reportPropagation reports the spread of results.
func reportPropagation(b *testing.B, n int, results []result) {
	b.Helper()
	var times, writes, requests, resync, serverCPU, ownCPU []float64
	for _, r := range results {
		times = append(times, float64(r.toLastCopy.Milliseconds()))
		serverCPU = append(serverCPU, float64(r.serverCPU.Milliseconds()))
		ownCPU = append(ownCPU, float64(r.ownCPU.Milliseconds()))
		w := 0
		for _, c := range r.writes {
			w += c
		}
		writes = append(writes, float64(w))
		requests = append(requests, float64(r.requests))
		total := 0
		for _, c := range r.resync {
			total += c
		}
		resync = append(resync, float64(total))
	}
	b.ReportMetric(float64(n), "namespaces")
	b.ReportMetric(float64(len(results)), "changes")
	for _, m := range []struct {
		unit   string
		values []float64
	}{{"ms-to-last-copy", times}, {"writes/change", writes}, {"apiserver-cpu-ms", serverCPU}, {"own-cpu-ms", ownCPU}} {
		slices.Sort(m.values)
		b.ReportMetric(m.values[0], m.unit+"-min")
		b.ReportMetric(m.values[len(m.values)/2], m.unit+"-median")
		b.ReportMetric(m.values[len(m.values)-1], m.unit+"-max")
	}
	slices.Sort(requests)
	slices.Sort(resync)
	b.ReportMetric(requests[len(requests)-1], "requests/change-max")
	b.ReportMetric(resync[len(resync)-1], "requests/resync-max")
	b.Logf("%d changes: time to last copy %v ms, writes %v, CPU of the API server %v ms, of the controller and the watch %v ms",
		len(results), times, writes, serverCPU, ownCPU)
}
