package infracontroller_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/flavors"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
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
}

// newPropagation starts a control plane, n tenant namespaces and the
// controller (presets only, client-side rate limit qps), and waits for the
// initial copies.
func newPropagation(tb testing.TB, n int, qps float32) *propagation {
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
	o.DisableStorageClasses, o.DisableCSIAccess, o.DisableNetworkPolicies = true, true, true
	o.Flavors.Instancetypes, o.Flavors.Preferences = false, false
	p := &propagation{infra: infra, counter: envtest.NewRequestCounter(), n: n, cpu: 1}
	p.ctrl = startController(tb, infra.Config, o, p.counter, qps)
	eventually(tb, 5*time.Minute, func() error { return p.copies(ctx, "1") })
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
	start := time.Now()
	if err := p.infra.Client.Update(ctx, src); err != nil {
		tb.Fatal(err)
	}
	eventually(tb, 5*time.Minute, func() error { return p.copies(ctx, cpu) })
	r := result{toLastCopy: time.Since(start)}
	quiesce(tb, p.ctrl)
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
	eventually(tb, 5*time.Minute, func() error {
		if got := p.ctrl.controllers.Flavors.Reconciles() - before; got < uint64(p.n) {
			return fmt.Errorf("%d of %d namespaces resynced", got, p.n)
		}
		return nil
	})
	quiesce(tb, p.ctrl)
	r.resync = p.counter.Counts()
	return r
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
	p := newPropagation(t, n, 50)
	for i := range 2 {
		t.Run(fmt.Sprintf("change %d", i+1), func(t *testing.T) {
			r := p.change(t)
			want := map[envtest.Request]int{{Verb: http.MethodPut, Resource: "kubevirt.io/v1/virtualmachineinstancepresets"}: n}
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
// and measures its propagation to 500 tenant namespaces.
func BenchmarkPresetPropagation(b *testing.B) {
	const n = 500
	for _, bc := range []struct {
		name string
		qps  float32
	}{
		{name: "qps=50", qps: 50},
		{name: "unlimited", qps: -1},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := newPropagation(b, n, bc.qps)
			var last time.Duration
			var writes, requests, resync, runs int
			for b.Loop() {
				r := p.change(b)
				last += r.toLastCopy
				for _, w := range r.writes {
					writes += w
				}
				requests += r.requests
				for _, c := range r.resync {
					resync += c
				}
				runs++
			}
			b.ReportMetric(float64(n), "namespaces")
			b.ReportMetric(float64(last.Milliseconds())/float64(runs), "ms-to-last-copy")
			b.ReportMetric(float64(writes)/float64(runs), "writes/change")
			b.ReportMetric(float64(requests)/float64(runs), "requests/change")
			b.ReportMetric(float64(resync)/float64(runs), "requests/resync")
		})
	}
}
