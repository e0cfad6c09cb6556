package machine

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// infraLocated is an instance that names the infra cluster and namespace
// it lives in (the KubeVirt provider's).
type infraLocated interface {
	InfraClient() *infra.Client
}

// infraClientOf returns the infra client of an instance, nil when its
// provider names none.
func infraClientOf(inst cloudprovider.Instance) *infra.Client {
	if l, ok := inst.(infraLocated); ok {
		return l.InfraClient()
	}
	return nil
}

// infraWatches watches the infra namespaces of the Machines. For each
// (infra kubeconfig, namespace) pair that some Machine's instance lives in,
// event handlers on the informers of that pair's cache (the provider's own,
// held open by infra.Clients.Hold) enqueue the Machine named like a changed
// VirtualMachine or VirtualMachineInstance, or named by a changed
// migration's spec.vmiName, and with infra node labels on, the Machines of
// the VMIs on an infra Node whose labels changed. A pair is watched from
// the first reconcile of a Machine whose instance lives there until its
// last Machine is gone; the pinned pair from the start. Everything stops
// with the controller.
type infraWatches struct {
	clients *infra.Clients
	// pinned, when set, is watched from the start and kept without
	// Machines (the --infra-kubeconfig pair).
	pinned *infra.Client
	// users reads Machines by name from the user cluster's cache.
	users ctrlruntimeclient.Reader
	// kinds are the kinds a pair's watch follows (see watchedKinds).
	kinds []infraKind
	// optionalSync is optionalSyncTimeout, shorter in tests.
	optionalSync time.Duration
	gauge        prometheus.Gauge
	log          *zap.SugaredLogger

	mu sync.Mutex
	// queue is the controller's, nil before the source started and after
	// it stopped; done is closed when it stops.
	queue workqueue.TypedRateLimitingInterface[reconcile.Request]
	done  <-chan struct{}
	pairs map[infra.Key]*pairWatch
	// machines maps each Machine to the pair it uses.
	machines map[types.NamespacedName]infra.Key
}

// pairWatch is the watch of one pair.
type pairWatch struct {
	key      infra.Key
	held     *infra.Held
	pinned   bool
	machines int
	handlers map[string]*infraHandler
}

// newInfraWatches returns the watches of a controller; nil without
// clients.
func newInfraWatches(clients *infra.Clients, pinned *infra.Client, users ctrlruntimeclient.Reader, nodeLabels bool,
	gauge prometheus.Gauge, log *zap.SugaredLogger,
) *infraWatches {
	if clients == nil {
		return nil
	}
	return &infraWatches{clients: clients, pinned: pinned, users: users, kinds: watchedKinds(nodeLabels), optionalSync: optionalSyncTimeout, gauge: gauge, log: log,
		pairs: map[infra.Key]*pairWatch{}, machines: map[types.NamespacedName]infra.Key{}}
}

// source hands the controller's queue to the watches when the controller
// starts, and ends every watch when it stops.
func (w *infraWatches) source() source.Source {
	return source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.queue, w.done = q, ctx.Done()
		if w.pinned != nil {
			p, err := w.addLocked(ctx, w.pinned, true)
			if err != nil {
				return err
			}
			w.registerLocked(ctx, p)
		}
		go func() {
			<-ctx.Done()
			w.stop()
		}()
		return nil
	})
}

// use records that the Machine's instance lives in client's pair, watching
// the pair from now on if it was not, and reports whether its watch has
// synced, so that its changes come as events.
func (w *infraWatches) use(ctx context.Context, machine types.NamespacedName, client *infra.Client) bool {
	if w == nil || client == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.queue == nil {
		return false
	}
	if old, ok := w.machines[machine]; ok && old != client.Key {
		w.dropLocked(machine)
	}
	p := w.pairs[client.Key]
	if p == nil {
		var err error
		if p, err = w.addLocked(ctx, client, false); err != nil {
			w.log.Warnw("Not watching the infra namespace of a Machine", "machine", machine.String(), "infra", client.Key.String(), "error", err.Error())
			return false
		}
	}
	if _, ok := w.machines[machine]; !ok {
		w.machines[machine] = client.Key
		p.machines++
	}
	w.registerLocked(ctx, p)
	return w.syncedLocked(p)
}

// forget records that the Machine is gone, and stops watching its pair if
// no other Machine uses it and it is not pinned.
func (w *infraWatches) forget(machine types.NamespacedName) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dropLocked(machine)
}

// Len returns the number of watched pairs.
func (w *infraWatches) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pairs)
}

// addLocked holds the cache of client's pair and starts its watch.
func (w *infraWatches) addLocked(ctx context.Context, client *infra.Client, pinned bool) (*pairWatch, error) {
	held, err := w.clients.Hold(ctx, client)
	if err != nil {
		return nil, err
	}
	p := &pairWatch{key: client.Key, held: held, pinned: pinned, handlers: map[string]*infraHandler{}}
	w.pairs[p.key] = p
	w.gauge.Inc()
	w.log.Infow("Watching an infra namespace", "infra", p.key.String(), "pinned", pinned)
	return p, nil
}

// dropLocked removes the Machine from its pair, and the pair's watch once
// no Machine uses it and it is not pinned.
func (w *infraWatches) dropLocked(machine types.NamespacedName) {
	key, ok := w.machines[machine]
	if !ok {
		return
	}
	delete(w.machines, machine)
	p := w.pairs[key]
	if p == nil {
		return
	}
	if p.machines--; p.machines <= 0 && !p.pinned {
		w.removeLocked(p)
	}
}

// removeLocked removes the pair's event handlers and releases its cache,
// which stops its informers unless something else holds it.
func (w *infraWatches) removeLocked(p *pairWatch) {
	for _, h := range p.handlers {
		h.remove()
	}
	w.clients.Release(p.key)
	delete(w.pairs, p.key)
	w.gauge.Dec()
	w.log.Infow("Stopped watching an infra namespace", "infra", p.key.String())
}

// stop ends every watch.
func (w *infraWatches) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.pairs {
		w.removeLocked(p)
	}
	w.machines = map[types.NamespacedName]infra.Key{}
	w.queue = nil
}

// syncedLocked reports whether the pair has a handler of every required
// kind and each has seen its informer's initial list.
func (w *infraWatches) syncedLocked(p *pairWatch) bool {
	for _, k := range w.kinds {
		if h := p.handlers[k.name]; k.required && (h == nil || !h.synced()) {
			return false
		}
	}
	return true
}

// enqueue adds the Machines called like names that use the pair of key,
// or no pair yet, to the queue.
func (w *infraWatches) enqueue(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], key infra.Key, names []string) {
	for _, name := range names {
		for _, req := range machinesBy(ctx, w.users, ctrlruntimeclient.MatchingFields{IndexMachineName: name}, nil) {
			w.mu.Lock()
			used, ok := w.machines[req.NamespacedName]
			w.mu.Unlock()
			if !ok || used == key {
				q.Add(req)
			}
		}
	}
}
