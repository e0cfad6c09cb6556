package kubevirt

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The provider calls whose infra requests are counted, in lifecycle order.
var lifecycleOps = []string{"AddDefaults", "Validate", "Get (absent)", "Create", "Get (warm)", "Cleanup"}

// benchScenario is a spec whose request cost is measured.
type benchScenario struct {
	name  string
	patch func(f *fixture) string
}

var benchScenarios = []benchScenario{
	{name: "cheapest", patch: func(*fixture) string { return "" }},
	{name: "lookups", patch: func(f *fixture) string {
		// Empty storageAccessType (StorageProfile lookup), a cluster
		// instancetype found after the namespaced lookup misses, and a
		// secondary disk.
		return `
cloudProviderSpec:
  virtualMachine:
    instancetype: {name: ` + f.namespace + `-cluster-type}
    template:
      primaryDisk: {storageAccessType: null}
      secondaryDisks: [{size: 5Gi, storageClassName: ` + f.storageClass + `}]
`
	}},
}

// opRequests are the infra requests of one provider call, split into the
// one-time cost of starting informers and discovery, and the call's own.
type opRequests struct {
	informer map[envtest.Request]int
	call     map[envtest.Request]int
}

func (o opRequests) total() int { return sum(o.informer) + sum(o.call) }

func sum(m map[envtest.Request]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// isInformerStart tells the requests an informer or the RESTMapper makes
// once per client from those of a call.
func isInformerStart(r envtest.Request) bool {
	return r.Verb == "LIST" || r.Verb == "WATCH" || r.Verb == "DISCOVERY"
}

// lifecycle runs one Machine through the provider like machine-controller
// does (webhook, first reconcile, a later poll, deletion) and returns the
// requests of each call.
func lifecycle(tb testing.TB, f *fixture, name string, spec []byte) map[string]opRequests {
	tb.Helper()
	ctx := tb.Context()
	m := machine(name, spec)
	out := map[string]opRequests{}
	measure := func(op string, call func() error) {
		tb.Helper()
		f.counter.Reset()
		if err := call(); err != nil {
			tb.Fatalf("%s: %v", op, err)
		}
		split := opRequests{informer: map[envtest.Request]int{}, call: map[envtest.Request]int{}}
		for r, n := range f.counter.Counts() {
			if isInformerStart(r) {
				split.informer[r] += n
			} else {
				split.call[r] += n
			}
		}
		prev := out[op]
		for r, n := range prev.informer {
			split.informer[r] += n
		}
		for r, n := range prev.call {
			split.call[r] += n
		}
		out[op] = split
	}
	measure("AddDefaults", func() error { _, err := f.provider.AddDefaults(ctx, nil, m.Spec); return err })
	measure("Validate", func() error { return f.provider.Validate(ctx, nil, m.Spec) })
	measure("Get (absent)", func() error {
		if _, err := f.provider.Get(ctx, nil, m, f.data); !errors.Is(err, cloudprovider.ErrInstanceNotFound) {
			return fmt.Errorf("got %w, want ErrInstanceNotFound", err)
		}
		return nil
	})
	measure("Create", func() error { _, err := f.provider.Create(ctx, nil, m, f.data, testUserData); return err })
	v, _ := f.objects(tb, name)
	f.waitForCache(tb, v, true)
	measure("Get (warm)", func() error { _, err := f.provider.Get(ctx, nil, m, f.data); return err })
	poll.UntilTrue(tb, 30*time.Second, "Cleanup finishes", func() (bool, error) {
		var done bool
		measure("Cleanup", func() error {
			var err error
			done, err = f.provider.Cleanup(ctx, nil, m, f.data)
			return err
		})
		return done, nil
	})
	return out
}

// benchFixture prepares a namespace with what the scenarios reference.
func benchFixture(tb testing.TB) *fixture {
	tb.Helper()
	f := newFixture(tb, sharedEnv(tb))
	f.create(tb,
		unstructuredObject("instancetype.kubevirt.io", "v1beta1", "VirtualMachineClusterInstancetype", "", f.namespace+"-cluster-type"),
		&cdicorev1beta1.StorageProfile{ObjectMeta: metav1.ObjectMeta{Name: f.storageClass},
			Status: cdicorev1beta1.StorageProfileStatus{ClaimPropertySets: []cdicorev1beta1.ClaimPropertySet{
				{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem)},
			}}},
	)
	return f
}

// callBudget is what a call may cost once informers run: Create its three
// writes (plus the cache DataVolume on a cold provider, see coldBudget),
// the first Cleanup its two deletions, everything else nothing.
var callBudget = map[string]map[envtest.Request]int{
	"AddDefaults":  {},
	"Validate":     {},
	"Get (absent)": {},
	"Create": {
		{Verb: "POST", Resource: "v1/secrets"}:                     1,
		{Verb: "POST", Resource: "kubevirt.io/v1/virtualmachines"}: 1,
		{Verb: "PATCH", Resource: "v1/secrets"}:                    1,
	},
	"Get (warm)": {},
	"Cleanup": {
		{Verb: "DELETE", Resource: "kubevirt.io/v1/virtualmachines"}: 1,
		{Verb: "DELETE", Resource: "v1/secrets"}:                     1,
	},
}

// coldBudget is the budget of the first call of a fresh provider: the
// first Create of an http image also creates the namespace's cache
// DataVolume of it; later Machines of the same image find it in the cache.
func coldBudget(op string) map[envtest.Request]int {
	if op != "Create" {
		return callBudget[op]
	}
	out := maps.Clone(callBudget[op])
	out[envtest.Request{Verb: "POST", Resource: "cdi.kubevirt.io/v1beta1/datavolumes"}] = 1
	return out
}

// TestRequestBudgets fails when a provider call makes more infra requests
// than its budget: the first Machine of a fresh provider may start each
// informer once, the second may only write.
func TestRequestBudgets(t *testing.T) {
	for _, sc := range benchScenarios {
		t.Run(sc.name, func(t *testing.T) {
			f := benchFixture(t)
			spec := f.spec(t, sc.patch(f))
			cold := lifecycle(t, f, "cold-"+sc.name, spec)
			warm := lifecycle(t, f, "warm-"+sc.name, spec)
			informers := map[envtest.Request]int{}
			for _, op := range lifecycleOps {
				if diff := cmp.Diff(coldBudget(op), cold[op].call); diff != "" {
					t.Errorf("%s on a cold provider, requests beyond informer starts (-budget +got):\n%s", op, diff)
				}
				if diff := cmp.Diff(callBudget[op], mergeCounts(warm[op].informer, warm[op].call)); diff != "" {
					t.Errorf("%s on a warm provider (-budget +got):\n%s", op, diff)
				}
				for r, n := range cold[op].informer {
					informers[r] += n
				}
			}
			for r, n := range informers {
				// One LIST and one WATCH per kind at most, or a single
				// streaming WATCH; discovery is a couple of documents.
				if (r.Verb == "DISCOVERY" && n > 4) || (r.Verb != "DISCOVERY" && n > 1) {
					t.Errorf("informer start %s made %d times", r, n)
				}
			}
			t.Logf("\n%s", requestTable(cold, warm))
		})
	}
}

func mergeCounts(a, b map[envtest.Request]int) map[envtest.Request]int {
	out := maps.Clone(a)
	for r, n := range b {
		out[r] += n
	}
	return out
}

// requestTable renders the counts as the markdown table of
// docs/benchmarks.md.
func requestTable(cold, warm map[string]opRequests) string {
	var b strings.Builder
	b.WriteString("| Call | cold: informer starts + discovery | cold: call | warm: total |\n|---|---|---|---|\n")
	for _, op := range lifecycleOps {
		fmt.Fprintf(&b, "| %s | %d %s | %d | %d |\n", op, sum(cold[op].informer), describe(cold[op].informer), sum(cold[op].call), warm[op].total())
	}
	return b.String()
}

func describe(m map[envtest.Request]int) string {
	if len(m) == 0 {
		return ""
	}
	parts := make([]string, 0, len(m))
	for _, r := range slices.SortedFunc(maps.Keys(m), func(a, b envtest.Request) int { return strings.Compare(a.String(), b.String()) }) {
		parts = append(parts, fmt.Sprintf("%s×%d", r, m[r]))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// BenchmarkProviderRequests reports the infra requests per call of a warm
// provider, one Machine lifecycle per iteration.
func BenchmarkProviderRequests(b *testing.B) {
	for _, sc := range benchScenarios {
		b.Run(sc.name, func(b *testing.B) {
			f := benchFixture(b)
			spec := f.spec(b, sc.patch(f))
			lifecycle(b, f, "bench-warmup", spec)
			totals := map[string]int{}
			i := 0
			for b.Loop() {
				for op, r := range lifecycle(b, f, fmt.Sprintf("bench-%d", i), spec) {
					totals[op] += r.total()
				}
				i++
			}
			for _, op := range lifecycleOps {
				unit := strings.NewReplacer(" ", "", "(", "-", ")", "").Replace(op) + "-requests/op"
				b.ReportMetric(float64(totals[op])/float64(i), unit)
			}
		})
	}
}
