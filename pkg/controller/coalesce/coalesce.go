package coalesce

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// DefaultWindow is the window of New(0): the longest a child's change
// waits before its owner's status shows it.
const DefaultWindow = time.Second

// An owner's size is the number of objects its status counts (a
// MachineSet's or MachineDeployment's replicas). SizePerWidth objects widen
// its window by one width, and MaxWidths is the most widths it spans: a
// window of 1 s is 1 s up to a size of 99, 2 s from 100, and 10 s from 900.
const (
	SizePerWidth = 100
	MaxWidths    = 10
)

// Window remembers, per owner, until when the events of its children wait.
// It is safe for concurrent use.
type Window struct {
	width time.Duration
	now   func() time.Time
	mu    sync.Mutex
	until map[types.NamespacedName]time.Time
}

// New returns a Window of width: DefaultWindow when width is 0, none
// (children's events reconcile at once) when width is negative.
func New(width time.Duration) *Window {
	if width == 0 {
		width = DefaultWindow
	}
	return &Window{width: max(width, 0), now: time.Now, until: map[types.NamespacedName]time.Time{}}
}

// Width returns the window's length; 0 when there is none.
func (w *Window) Width() time.Duration {
	return w.width
}

// WidthFor returns the window of an owner of size objects (see
// SizePerWidth); 0 when there is none.
func (w *Window) WidthFor(size int) time.Duration {
	return w.width * time.Duration(min(1+max(size, 0)/SizePerWidth, MaxWidths))
}

// Wrote records that a reconcile of key, an owner of size objects, which
// started at start changed the object: the events of its children wait
// until start plus WidthFor(size).
func (w *Window) Wrote(key types.NamespacedName, start time.Time, size int) {
	if w.width == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if end := start.Add(w.WidthFor(size)); end.After(w.until[key]) {
		w.until[key] = end
	}
}

// Forget drops what is known of key, e.g. once its object is gone.
func (w *Window) Forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.until, key)
}

// Wait returns how long an event of a child of key waits: until the
// window of key's last writing reconcile ends, 0 outside one.
func (w *Window) Wait(key types.NamespacedName) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	until, ok := w.until[key]
	if !ok {
		return 0
	}
	left := until.Sub(w.now())
	if left <= 0 {
		// A past window is dropped once seen; one that is never seen
		// stays until Forget, at most one per owner.
		delete(w.until, key)
		return 0
	}
	return left
}

// Handler returns h with every request it adds held for the window of
// its object (see Wait).
func (w *Window) Handler(h handler.EventHandler) handler.EventHandler {
	return &heldHandler{window: w, inner: h}
}

// heldHandler passes events to inner with a queue that holds requests.
type heldHandler struct {
	window *Window
	inner  handler.EventHandler
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// Create implements handler.EventHandler.
func (h *heldHandler) Create(ctx context.Context, e event.CreateEvent, q queue) {
	h.inner.Create(ctx, e, h.held(q))
}

// Update implements handler.EventHandler.
func (h *heldHandler) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	h.inner.Update(ctx, e, h.held(q))
}

// Delete implements handler.EventHandler.
func (h *heldHandler) Delete(ctx context.Context, e event.DeleteEvent, q queue) {
	h.inner.Delete(ctx, e, h.held(q))
}

// Generic implements handler.EventHandler.
func (h *heldHandler) Generic(ctx context.Context, e event.GenericEvent, q queue) {
	h.inner.Generic(ctx, e, h.held(q))
}

func (h *heldHandler) held(q queue) queue {
	return heldQueue{queue: q, window: h.window}
}

// heldQueue turns Add into AddAfter the wait of the request's object.
// The queue keeps the earliest time of an object already waiting, so
// the requests of one window make one entry.
type heldQueue struct {
	queue
	window *Window
}

// Add adds req once its object's window has passed.
func (q heldQueue) Add(req reconcile.Request) {
	if wait := q.window.Wait(req.NamespacedName); wait > 0 {
		q.AddAfter(req, wait)
		return
	}
	q.queue.Add(req)
}

// Track returns what a reconcile of obj, an owner of size objects,
// defers: it records the reconcile as one that wrote obj (see
// Wrote), counted from when Track was called, when obj's resourceVersion
// changed in between, as every write that updates obj in place (Update,
// Patch, their status variants) makes it.
func (w *Window) Track(obj metav1.Object, size int) func() {
	start, read := w.now(), obj.GetResourceVersion()
	key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
	return func() {
		if obj.GetResourceVersion() != read {
			w.Wrote(key, start, size)
		}
	}
}

// MaxWrites is the most writes of an owner of a size below SizePerWidth
// that a burst of its children's changes lasting d causes (a larger
// owner's wider window allows fewer): a window opens at each write and
// holds what comes after it, but a change seen while a write is under way
// may cause one more write right after it, so two per window begun
// during d, and two for the window open when d ends. Without a window
// there is no bound: -1.
func (w *Window) MaxWrites(d time.Duration) int {
	if w.width == 0 {
		return -1
	}
	return 2 * (int(d/w.width) + 2)
}
