package scale

import (
	"slices"
	"sync"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// readiness records, from watches of the user cluster, when each Machine
// became ready as its MachineSet counts it: once it has a nodeRef and that
// Node is Ready, whichever was seen last. These are the changes a
// MachineSet's status must show, one after the other.
type readiness struct {
	mu       sync.Mutex
	now      func() time.Time
	nodeOf   map[string]string
	linkedAt map[string]time.Time
	readyAt  map[string]time.Time
	// setChangedAt holds when a MachineSet's status was seen to change:
	// the changes its MachineDeployment's status follows.
	setChangedAt []time.Time
}

// recordReadiness records the readiness of the Machines of c, a cache of
// the user cluster that watches Machines and Nodes (see watchKinds), for
// as long as c runs.
func recordReadiness(tb testing.TB, c cache.Cache) *readiness {
	tb.Helper()
	r := &readiness{now: time.Now, nodeOf: map[string]string{}, linkedAt: map[string]time.Time{}, readyAt: map[string]time.Time{}}
	for _, kind := range []ctrlruntimeclient.Object{&clusterv1alpha1.Machine{}, &corev1.Node{}, &clusterv1alpha1.MachineSet{}} {
		informer, err := c.GetInformer(tb.Context(), kind)
		if err == nil {
			_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
				AddFunc:    func(obj any) { r.observe(obj) },
				UpdateFunc: func(old, obj any) { r.observeSet(old, obj); r.observe(obj) },
			})
		}
		if err != nil {
			tb.Fatalf("failed to watch %T: %v", kind, err)
		}
	}
	return r
}

// observe records the first nodeRef of a Machine and the first Ready
// condition of a Node.
func (r *readiness) observe(obj any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch o := obj.(type) {
	case *clusterv1alpha1.Machine:
		if _, seen := r.linkedAt[o.Name]; !seen && o.Status.NodeRef != nil {
			r.linkedAt[o.Name], r.nodeOf[o.Name] = r.now(), o.Status.NodeRef.Name
		}
	case *corev1.Node:
		if _, seen := r.readyAt[o.Name]; seen {
			return
		}
		for _, c := range o.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				r.readyAt[o.Name] = r.now()
			}
		}
	}
}

// observeSet records the time of a change of a MachineSet's status.
func (r *readiness) observeSet(old, obj any) {
	before, ok := old.(*clusterv1alpha1.MachineSet)
	after, ok2 := obj.(*clusterv1alpha1.MachineSet)
	if !ok || !ok2 || equality.Semantic.DeepEqual(before.Status, after.Status) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.setChangedAt = append(r.setChangedAt, r.now())
}

// setChanges returns when MachineSet statuses changed, in order.
func (r *readiness) setChanges() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.SortedFunc(slices.Values(r.setChangedAt), time.Time.Compare)
}

// times returns when each ready Machine became ready, in order.
func (r *readiness) times() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	var times []time.Time
	for machine, linked := range r.linkedAt {
		if ready, ok := r.readyAt[r.nodeOf[machine]]; ok {
			times = append(times, maxTime(linked, ready))
		}
	}
	slices.SortFunc(times, time.Time.Compare)
	return times
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// windowsOf returns how many windows of width the sorted changes at times
// fall into when a window opens at the first change after the last one
// ended: the fewest status writes that show each change no later than one
// width after it.
func windowsOf(times []time.Time, width time.Duration) int {
	n, end := 0, time.Time{}
	for _, t := range times {
		if n == 0 || !t.Before(end) {
			n, end = n+1, t.Add(width)
		}
	}
	return n
}

func TestWindowsOf(t *testing.T) {
	at := func(ms ...int) []time.Time {
		base := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
		times := make([]time.Time, 0, len(ms))
		for _, m := range ms {
			times = append(times, base.Add(time.Duration(m)*time.Millisecond))
		}
		return times
	}
	for _, tc := range []struct {
		name  string
		times []time.Time
		want  int
	}{
		{"none", nil, 0},
		{"one", at(0), 1},
		{"a burst within one width", at(0, 100, 999), 1},
		{"the width's end opens the next", at(0, 1000), 2},
		{"one per width", at(0, 1500, 3000, 4500), 4},
		{"a window opens at its first change", at(0, 900, 1100, 1900), 2},
	} {
		if got := windowsOf(tc.times, time.Second); got != tc.want {
			t.Errorf("%s: windowsOf = %d, want %d", tc.name, got, tc.want)
		}
	}
}
