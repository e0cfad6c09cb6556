package tenantconn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/remote"
)

// The delays between attempts to set up the watch of a tenant cluster that
// cannot be reached (its informers retry on their own once set up).
var (
	retryMin = time.Second
	retryMax = 2 * time.Minute
)

// Watches watches our objects in tenant clusters: per tenant namespace it
// runs a cache of that namespace's tenant cluster holding only the objects
// of Kinds that carry tenant.ManagedByLabel, and turns every add, update and delete
// among them into the reconcile request of the tenant namespace (Request)
// for each subscriber of the object's kind (Subscribe). Controllers keep
// the watch of a namespace current with Ensure and end it with Stop. The
// cache reaches its cluster over the namespace's connection of Clients (one
// transport and rate limiter per tenant cluster). Writes do not go through
// these caches; use Clients for them.
//
// Watches is a manager.Runnable and must be added to the manager
// (mgr.Add) once: watches ensured before the manager starts begin when it
// starts them, and all of them end when the manager stops. Like the
// controllers that use it, it runs only while the manager is the leader.
//
// The zero value is not usable: set Kinds and Clients. A Watches must not
// be copied.
type Watches struct {
	// Scheme maps Kinds to their API types; client-go's scheme when nil.
	Scheme *runtime.Scheme
	// Kinds are the typed objects to watch, e.g. &storagev1.StorageClass{}.
	Kinds []ctrlruntimeclient.Object
	// Mapper, when set, maps Kinds for every tenant watch (see
	// StaticMapper); without it each watch uses its connection's mapper.
	Mapper meta.RESTMapper
	// Clients are the connections the watches use; required.
	Clients *Clients

	// kinds are the kinds of Kinds, in their order, computed once.
	kinds     []schema.GroupVersionKind
	kindsErr  error
	kindsOnce sync.Once

	mu sync.Mutex
	// started is set by Start, stopped when its context ends.
	started, stopped bool
	entries          map[string]*watch
	subscriptions    []*subscription
	// unclaimed holds, per namespace, the kinds that changed while there
	// was no subscription; a subscription made later takes its kinds'
	// share, until the first source starts.
	unclaimed map[string]map[schema.GroupVersionKind]bool
	wg        sync.WaitGroup
}

// subscription is the interest of one controller in some of the watched
// kinds.
type subscription struct {
	// kinds are the kinds whose changes the subscriber hears of; all of
	// them when nil.
	kinds map[schema.GroupVersionKind]bool
	// queues are the queues of the started sources.
	queues []workqueue.TypedRateLimitingInterface[reconcile.Request]
	// pending holds the namespaces with changes before a queue was known.
	pending map[string]bool
}

// watch is the cache of one tenant namespace.
type watch struct {
	namespace string
	conn      *conn
	cache     cache.Cache
	// cancel ends the watch; nil until it is launched.
	cancel context.CancelFunc
	// regs are the handler registrations of the kinds, one per kind once
	// the informers are set up; guarded by Watches.mu.
	regs []toolscache.ResourceEventHandlerRegistration
}

// Source returns the source of the requests of tenant namespaces whose
// watched objects of any kind changed; see Subscribe.
func (w *Watches) Source() source.Source {
	return w.source(&subscription{})
}

// Subscribe returns the source of the requests of tenant namespaces whose
// watched objects of kinds (every watched kind when none is given) changed;
// add it to a controller with WatchesRawSource. Requests that arrive before
// the controller starts the source are delivered when it does. A kind that
// is not among Kinds is an error.
func (w *Watches) Subscribe(kinds ...ctrlruntimeclient.Object) (source.Source, error) {
	gvks, err := w.watchedKinds()
	if err != nil {
		return nil, err
	}
	sub := &subscription{}
	for _, kind := range kinds {
		gvk, err := w.gvk(kind)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(gvks, gvk) {
			return nil, fmt.Errorf("%s is not among the watched kinds of the tenant clusters", gvk)
		}
		if sub.kinds == nil {
			sub.kinds = map[schema.GroupVersionKind]bool{}
		}
		sub.kinds[gvk] = true
	}
	return w.source(sub), nil
}

// source registers sub and returns its source.
func (w *Watches) source(sub *subscription) source.Source {
	w.mu.Lock()
	w.subscriptions = append(w.subscriptions, sub)
	for namespace, kinds := range w.unclaimed {
		for gvk := range kinds {
			if sub.wants(gvk) {
				sub.hold(namespace)
			}
		}
	}
	w.mu.Unlock()
	return source.Func(func(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.unclaimed = nil
		sub.queues = append(sub.queues, queue)
		for namespace := range sub.pending {
			queue.Add(tenant.Request(namespace))
		}
		sub.pending = nil
		go func() {
			<-ctx.Done()
			w.removeQueue(sub, queue)
		}()
		return nil
	})
}

// watchedKinds returns the kinds of Kinds, in their order.
func (w *Watches) watchedKinds() ([]schema.GroupVersionKind, error) {
	w.kindsOnce.Do(func() {
		for _, kind := range w.Kinds {
			gvk, err := w.gvk(kind)
			if err != nil {
				w.kindsErr = err
				return
			}
			w.kinds = append(w.kinds, gvk)
		}
	})
	return w.kinds, w.kindsErr
}

// gvk returns the kind of obj in the scheme of w.
func (w *Watches) gvk(obj ctrlruntimeclient.Object) (schema.GroupVersionKind, error) {
	scheme := w.Scheme
	if scheme == nil {
		scheme = clientgoscheme.Scheme
	}
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("failed to find the kind of %T: %w", obj, err)
	}
	return gvk, nil
}

func (w *Watches) removeQueue(sub *subscription, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	w.mu.Lock()
	defer w.mu.Unlock()
	sub.queues = slices.DeleteFunc(sub.queues, func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) bool { return q == queue })
}

// Ensure makes sure the tenant cluster of namespace is watched through
// kubeconfig. It returns at once: a known kubeconfig (compared by hash)
// changes nothing, another one replaces the watch, and the cache of a new
// watch starts in the background, so an unreachable tenant cluster never
// blocks the caller. A kubeconfig that cannot be used ends the old watch and
// is reported. After the manager stopped, Ensure does nothing.
func (w *Watches) Ensure(namespace string, kubeconfig []byte) error {
	// A misconfigured Watches is refused before a connection is built
	// that nothing would use.
	if err := w.configured(); err != nil {
		return err
	}
	cn, err := w.Clients.conn(namespace, kubeconfig)
	if err != nil {
		// The old watch follows a kubeconfig that cannot be used.
		w.Stop(namespace)
		return err
	}
	return w.ensure(cn)
}

// configured says what a Watches lacks to be used: connections and kinds.
func (w *Watches) configured() error {
	if w.Clients == nil {
		return errors.New("the tenant watches have no connections (Clients)")
	}
	if len(w.Kinds) == 0 {
		return errors.New("the tenant watches have no kinds to watch")
	}
	return nil
}

// ensure makes sure the tenant cluster of cn is watched over cn; see Ensure.
func (w *Watches) ensure(cn *conn) error {
	if err := w.configured(); err != nil {
		return err
	}
	namespace := cn.namespace
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return nil
	}
	if e, ok := w.entries[namespace]; ok && e.conn == cn {
		return nil
	}
	// The old watch follows a kubeconfig the namespace no longer has.
	w.stopLocked(namespace)
	c, err := w.newCache(cn)
	if err != nil {
		return err
	}
	e := &watch{namespace: namespace, conn: cn, cache: c}
	if w.entries == nil {
		w.entries = map[string]*watch{}
	}
	w.entries[namespace] = e
	if w.started {
		w.launch(e)
	}
	return nil
}

// newCache builds, without contacting the tenant cluster, a cache of the
// managed objects of the tenant cluster of cn. Its informers retry at a
// fixed interval while the cluster cannot be reached, so a watch resumes
// soon after an outage.
func (w *Watches) newCache(cn *conn) (cache.Cache, error) {
	c, err := cn.NewCache(remote.CacheOptions{
		Scheme:        w.Scheme,
		Mapper:        w.Mapper,
		LabelSelector: labels.SelectorFromSet(labels.Set{tenant.ManagedByLabel: tenant.ManagedByValue}),
		Patient:       true,
	})
	if err != nil {
		return nil, fmt.Errorf("failed to watch the tenant cluster of %s: %w", cn.namespace, err)
	}
	return c, nil
}

// Stop ends the watch of namespace, if any; call it when the namespace or
// its kubeconfig goes. It does not wait for the cache to wind down.
func (w *Watches) Stop(namespace string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopLocked(namespace)
}

func (w *Watches) stopLocked(namespace string) {
	e, ok := w.entries[namespace]
	if !ok {
		return
	}
	if e.cancel != nil {
		e.cancel()
	}
	delete(w.entries, namespace)
}

// Reader returns the cache of the tenant cluster of namespace once every
// watched kind has synced: it holds the objects of Kinds that carry
// tenant.ManagedByLabel, as the tenant cluster has them. ok is false without a
// watch or before it synced.
func (w *Watches) Reader(namespace string) (ctrlruntimeclient.Reader, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, found := w.entries[namespace]
	if !found || !e.synced(len(w.Kinds)) {
		return nil, false
	}
	return e.cache, true
}

// synced reports whether the handlers of all kinds of e are registered and
// have synced; the caller holds Watches.mu.
func (e *watch) synced(kinds int) bool {
	if len(e.regs) != kinds {
		return false
	}
	for _, reg := range e.regs {
		if !reg.HasSynced() {
			return false
		}
	}
	return true
}

// Running returns the number of tenant namespaces being watched (or, before
// the manager starts, to be watched).
func (w *Watches) Running() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.entries)
}

// Start launches the watches ensured so far, blocks until ctx ends, then
// stops every watch and waits for them to wind down. It implements
// manager.Runnable and may be called once.
func (w *Watches) Start(ctx context.Context) error {
	w.mu.Lock()
	if w.started {
		w.mu.Unlock()
		return errors.New("the tenant watches were already started")
	}
	w.started = true
	for _, e := range w.entries {
		w.launch(e)
	}
	w.mu.Unlock()

	<-ctx.Done()
	w.mu.Lock()
	w.stopped = true
	for namespace := range w.entries {
		w.stopLocked(namespace)
	}
	w.mu.Unlock()
	w.wg.Wait()
	return nil
}

// launch runs the cache of e in the background with a context of its own:
// a watch outlives the reconcile that ensured it.
func (w *Watches) launch(e *watch) {
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.run(ctx, e)
	}()
}

// run registers the informers of e, retrying with a growing delay while the
// tenant cluster cannot be reached, and runs its cache until ctx ends.
func (w *Watches) run(ctx context.Context, e *watch) {
	log := logf.Log.WithName("tenant-watch").WithValues("namespace", e.namespace)
	gvks, err := w.watchedKinds()
	if err != nil {
		log.Error(err, "failed to watch the tenant cluster")
		return
	}
	for i, kind := range w.Kinds {
		gvk := gvks[i]
		informer, err := getInformer(ctx, log, e.cache, kind)
		if err != nil {
			return // the watch was stopped
		}
		reg, err := informer.AddEventHandler(w.handler(e, gvk))
		if err != nil {
			log.Error(err, "failed to watch the tenant cluster", "kind", fmt.Sprintf("%T", kind))
			return
		}
		w.mu.Lock()
		e.regs = append(e.regs, reg)
		w.mu.Unlock()
	}
	syncCtx, cancelSync := context.WithCancel(ctx)
	var synced sync.WaitGroup
	synced.Go(func() { w.notifySynced(syncCtx, e, gvks) })
	if err := e.cache.Start(ctx); err != nil {
		log.Error(err, "the watch of the tenant cluster failed")
	}
	cancelSync()
	synced.Wait()
}

// notifySynced notifies the subscribers of every kind once every handler
// of e has synced, which is when Reader serves e. The initial list reports
// the objects that exist; this reports the ones that went while the
// namespace was not watched (before a restart with a new kubeconfig, say),
// which no event shows, and wakes the readers that wait for the sync.
func (w *Watches) notifySynced(ctx context.Context, e *watch, gvks []schema.GroupVersionKind) {
	synced := func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return e.synced(len(gvks))
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), synced) {
		return
	}
	for _, gvk := range gvks {
		w.notify(e, gvk)
	}
}

// getInformer returns the informer of kind, retrying until ctx ends.
func getInformer(ctx context.Context, log logr.Logger, c cache.Cache, kind ctrlruntimeclient.Object) (cache.Informer, error) {
	delay := retryMin
	for {
		informer, err := c.GetInformer(ctx, kind.DeepCopyObject().(ctrlruntimeclient.Object), cache.BlockUntilSynced(false))
		if err == nil {
			return informer, nil
		}
		log.Info("cannot watch the tenant cluster yet; retrying",
			"kind", fmt.Sprintf("%T", kind), "after", delay, "error", err.Error())
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
		delay = min(2*delay, retryMax)
	}
}

// handler notifies the subscribers of kind gvk of every change in the
// namespace of e; the informers' periodic resyncs, which change nothing,
// are skipped.
func (w *Watches) handler(e *watch, gvk schema.GroupVersionKind) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { w.notify(e, gvk) },
		UpdateFunc: func(oldObj, newObj any) {
			if !sameVersion(oldObj, newObj) {
				w.notify(e, gvk)
			}
		},
		DeleteFunc: func(any) { w.notify(e, gvk) },
	}
}

// notify queues the request of the namespace of e for every subscriber of
// kind gvk unless e was replaced or stopped meanwhile.
func (w *Watches) notify(e *watch, gvk schema.GroupVersionKind) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.entries[e.namespace] != e {
		return
	}
	if len(w.subscriptions) == 0 {
		if w.unclaimed == nil {
			w.unclaimed = map[string]map[schema.GroupVersionKind]bool{}
		}
		if w.unclaimed[e.namespace] == nil {
			w.unclaimed[e.namespace] = map[schema.GroupVersionKind]bool{}
		}
		w.unclaimed[e.namespace][gvk] = true
		return
	}
	for _, sub := range w.subscriptions {
		if !sub.wants(gvk) {
			continue
		}
		if len(sub.queues) == 0 {
			sub.hold(e.namespace)
			continue
		}
		for _, q := range sub.queues {
			q.Add(tenant.Request(e.namespace))
		}
	}
}

// wants reports whether the subscriber hears of changes of kind gvk.
func (sub *subscription) wants(gvk schema.GroupVersionKind) bool {
	return sub.kinds == nil || sub.kinds[gvk]
}

// hold keeps the request of namespace until a source of sub starts.
func (sub *subscription) hold(namespace string) {
	if sub.pending == nil {
		sub.pending = map[string]bool{}
	}
	sub.pending[namespace] = true
}

func sameVersion(a, b any) bool {
	ma, errA := meta.Accessor(a)
	mb, errB := meta.Accessor(b)
	return errA == nil && errB == nil && ma.GetResourceVersion() == mb.GetResourceVersion()
}
