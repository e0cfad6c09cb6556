package coalesce

import (
	"context"
	"maps"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newAt(width time.Duration, now *time.Time) *Window {
	w := New(width)
	w.now = func() time.Time { return *now }
	return w
}

func TestWindowWidth(t *testing.T) {
	for _, tc := range []struct {
		width, want time.Duration
	}{{0, DefaultWindow}, {3 * time.Second, 3 * time.Second}, {-1, 0}} {
		if got := New(tc.width).Width(); got != tc.want {
			t.Errorf("New(%s).Width() = %s, want %s", tc.width, got, tc.want)
		}
	}
}

// TestWidthFor: the window widens by one width per SizePerWidth objects
// of its owner, up to MaxWidths widths; without a window there is none.
func TestWidthFor(t *testing.T) {
	for _, tc := range []struct {
		width time.Duration
		size  int
		want  time.Duration
	}{
		{time.Second, -1, time.Second},
		{time.Second, 0, time.Second},
		{time.Second, 99, time.Second},
		{time.Second, 100, 2 * time.Second},
		{time.Second, 300, 4 * time.Second},
		{time.Second, 900, 10 * time.Second},
		{time.Second, 5000, 10 * time.Second},
		{500 * time.Millisecond, 250, 1500 * time.Millisecond},
		{-1, 1000, 0},
	} {
		if got := New(tc.width).WidthFor(tc.size); got != tc.want {
			t.Errorf("New(%s).WidthFor(%d) = %s, want %s", tc.width, tc.size, got, tc.want)
		}
	}
}

// TestWaitOfALargeOwner: the write of an owner of 1000 objects holds its
// children's events for ten widths.
func TestWaitOfALargeOwner(t *testing.T) {
	now := t0
	key := types.NamespacedName{Namespace: "ns", Name: "large"}
	w := newAt(time.Second, &now)
	obj := &metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, ResourceVersion: "1"}
	done := w.Track(obj, 1000)
	obj.ResourceVersion = "2"
	done()
	now = t0.Add(4 * time.Second)
	if got := w.Wait(key); got != 6*time.Second {
		t.Errorf("wait %s, want 6s", got)
	}
}

func TestWait(t *testing.T) {
	now := t0
	key := types.NamespacedName{Namespace: "ns", Name: "ms"}
	other := types.NamespacedName{Namespace: "ns", Name: "other"}
	w := newAt(time.Second, &now)
	if got := w.Wait(key); got != 0 {
		t.Errorf("before any write: wait %s, want 0", got)
	}
	w.Wrote(key, t0, 3)
	now = t0.Add(300 * time.Millisecond)
	if got := w.Wait(key); got != 700*time.Millisecond {
		t.Errorf("within the window: wait %s, want 700ms", got)
	}
	if got := w.Wait(other); got != 0 {
		t.Errorf("another object: wait %s, want 0", got)
	}
	// A write of a reconcile that started earlier does not shorten it.
	w.Wrote(key, t0.Add(-time.Second), 3)
	if got := w.Wait(key); got != 700*time.Millisecond {
		t.Errorf("after an older write: wait %s, want 700ms", got)
	}
	now = t0.Add(time.Second)
	if got := w.Wait(key); got != 0 {
		t.Errorf("at the end of the window: wait %s, want 0", got)
	}
	if n := len(w.until); n != 0 {
		t.Errorf("%d windows kept after they passed", n)
	}
	w.Wrote(key, now, 3)
	w.Forget(key)
	if got := w.Wait(key); got != 0 {
		t.Errorf("after Forget: wait %s, want 0", got)
	}
	none := newAt(-1, &now)
	none.Wrote(key, now, 3)
	if got := none.Wait(key); got != 0 {
		t.Errorf("without a window: wait %s, want 0", got)
	}
}

func TestTrack(t *testing.T) {
	now := t0
	w := newAt(time.Second, &now)
	obj := &metav1.ObjectMeta{Namespace: "ns", Name: "ms", ResourceVersion: "1"}
	key := types.NamespacedName{Namespace: "ns", Name: "ms"}
	done := w.Track(obj, 3)
	now = t0.Add(100 * time.Millisecond)
	done()
	if got := w.Wait(key); got != 0 {
		t.Errorf("a reconcile that wrote nothing opened a window of %s", got)
	}
	done = w.Track(obj, 3)
	obj.ResourceVersion = "2"
	now = t0.Add(200 * time.Millisecond)
	done()
	// Counted from the reconcile's start (t0 + 100ms).
	if got := w.Wait(key); got != 900*time.Millisecond {
		t.Errorf("after a write: wait %s, want 900ms", got)
	}
}

// recordingQueue records what is added to it, and when.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	added map[reconcile.Request]time.Duration
}

func (q *recordingQueue) Add(req reconcile.Request) { q.added[req] = 0 }

func (q *recordingQueue) AddAfter(req reconcile.Request, d time.Duration) { q.added[req] = d }

func TestHandlerHoldsRequestsOfAWindow(t *testing.T) {
	now := t0
	w := newAt(time.Second, &now)
	held := types.NamespacedName{Namespace: "ns", Name: "held"}
	free := types.NamespacedName{Namespace: "ns", Name: "free"}
	w.Wrote(held, t0, 3)
	now = t0.Add(250 * time.Millisecond)
	h := w.Handler(handler.EnqueueRequestsFromMapFunc(func(_ context.Context, _ ctrlruntimeclient.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: held}, {NamespacedName: free}}
	}))
	want := map[reconcile.Request]time.Duration{{NamespacedName: held}: 750 * time.Millisecond, {NamespacedName: free}: 0}
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "child", ResourceVersion: "1"}}
	changed := obj.DeepCopy()
	changed.ResourceVersion = "2"
	for name, send := range map[string]func(*recordingQueue){
		"create": func(q *recordingQueue) { h.Create(t.Context(), event.CreateEvent{Object: obj}, q) },
		"update": func(q *recordingQueue) {
			h.Update(t.Context(), event.UpdateEvent{ObjectOld: obj, ObjectNew: changed}, q)
		},
		"delete":  func(q *recordingQueue) { h.Delete(t.Context(), event.DeleteEvent{Object: obj}, q) },
		"generic": func(q *recordingQueue) { h.Generic(t.Context(), event.GenericEvent{Object: obj}, q) },
	} {
		q := &recordingQueue{added: map[reconcile.Request]time.Duration{}}
		send(q)
		if !maps.Equal(q.added, want) {
			t.Errorf("%s: added %v, want %v", name, q.added, want)
		}
	}
}

func TestMaxWrites(t *testing.T) {
	for _, tc := range []struct {
		width, burst time.Duration
		want         int
	}{
		{time.Second, 0, 4},
		{time.Second, 999 * time.Millisecond, 4},
		{time.Second, 2500 * time.Millisecond, 8},
		{-1, time.Second, -1},
	} {
		if got := New(tc.width).MaxWrites(tc.burst); got != tc.want {
			t.Errorf("New(%s).MaxWrites(%s) = %d, want %d", tc.width, tc.burst, got, tc.want)
		}
	}
}
