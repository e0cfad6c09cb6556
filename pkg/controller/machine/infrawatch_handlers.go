package machine

import (
	"context"
	"fmt"
	"maps"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// optionalSyncTimeout is how long the informer of an optional kind may take
// to sync before the pair's watch gives the kind up: an identity without
// list and watch on migrations would otherwise retry, and log, forever.
const optionalSyncTimeout = 30 * time.Second

// infraKind is a kind whose changes a pair's watch passes on.
type infraKind struct {
	name   string
	newObj func() ctrlruntimeclient.Object
	// required kinds must have synced for the pair's watch to count as
	// synced (see infraWatches.use); an optional kind is given up for the
	// pair when it does not sync within optionalSyncTimeout.
	required bool
	// names returns the names of the Machines a changed object concerns.
	names func(ctx context.Context, p *pairWatch, obj any) []string
	// changed filters updates; nil passes every update.
	changed func(old, obj any) bool
}

// watchedKinds returns the kinds a pair's watch follows; nodeLabels adds
// the infra Nodes (Options.InfraNodeLabels).
func watchedKinds(nodeLabels bool) []infraKind {
	kinds := []infraKind{
		{name: "VirtualMachine", required: true, names: ownName,
			newObj: func() ctrlruntimeclient.Object { return &kubevirtcorev1.VirtualMachine{} }},
		{name: "VirtualMachineInstance", required: true, names: ownName,
			newObj: func() ctrlruntimeclient.Object { return &kubevirtcorev1.VirtualMachineInstance{} }},
		{name: "VirtualMachineInstanceMigration", names: migratedVMI,
			newObj: func() ctrlruntimeclient.Object { return &kubevirtcorev1.VirtualMachineInstanceMigration{} }},
	}
	if nodeLabels {
		kinds = append(kinds, infraKind{name: "Node", required: true, names: vmisOnNode, changed: labelsChanged,
			newObj: func() ctrlruntimeclient.Object { return &corev1.Node{} }})
	}
	return kinds
}

// infraHandler is the event handler of one kind on a pair's informer.
type infraHandler struct {
	kind     infraKind
	informer cache.Informer
	reg      toolscache.ResourceEventHandlerRegistration
	// absent: the infra cluster does not serve the kind, or it is optional
	// and did not sync in time; it is not tried again for the pair.
	absent bool
}

// synced reports whether the handler has seen its informer's initial list
// and the informer still runs.
func (h *infraHandler) synced() bool {
	return h.reg != nil && h.reg.HasSynced() && !h.informer.IsStopped()
}

// remove removes the handler's registration from its informer.
func (h *infraHandler) remove() {
	if h.reg != nil {
		_ = h.informer.RemoveEventHandler(h.reg)
		h.reg = nil
	}
}

// registerLocked adds the handlers the pair lacks, and adds again those
// whose informer stopped (the provider removes an informer that did not
// sync in time, and its next read starts another).
func (w *infraWatches) registerLocked(ctx context.Context, p *pairWatch) {
	for _, k := range w.kinds {
		h := p.handlers[k.name]
		if h != nil && (h.absent || !h.informer.IsStopped()) {
			continue
		}
		if h != nil {
			h.remove()
		}
		h, err := w.register(ctx, p, k)
		if err != nil {
			w.log.Debugw("Failed to watch an infra kind; trying again at the next reconcile", "kind", k.name, "infra", p.key.String(), "error", err.Error())
			delete(p.handlers, k.name)
			continue
		}
		p.handlers[k.name] = h
		if !k.required && !h.absent {
			go w.dropUnsynced(p, h, h.reg)
		}
	}
}

// register adds the handler of kind k to the pair's informer of it.
func (w *infraWatches) register(ctx context.Context, p *pairWatch, k infraKind) (*infraHandler, error) {
	h := &infraHandler{kind: k}
	if k.name == "Node" {
		if err := p.held.IndexField(ctx, &kubevirtcorev1.VirtualMachineInstance{}, indexVMINode, vmiNode); err != nil {
			return nil, err
		}
	}
	informer, err := p.held.Cache.GetInformer(ctx, k.newObj(), cache.BlockUntilSynced(false))
	if meta.IsNoMatchError(err) {
		h.absent = true
		return h, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to get the informer of %s: %w", k.name, err)
	}
	q := w.queue
	handle := func(obj any) {
		if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		// Handlers read only synced caches, which never wait on a context.
		ctx := context.Background()
		w.enqueue(ctx, q, p.key, k.names(ctx, p, obj))
	}
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: handle,
		UpdateFunc: func(old, obj any) {
			if k.changed == nil || k.changed(old, obj) {
				handle(obj)
			}
		},
		DeleteFunc: handle,
	})
	if err != nil {
		return nil, fmt.Errorf("failed to add the event handler of %s: %w", k.name, err)
	}
	h.informer, h.reg = informer, reg
	return h, nil
}

// dropUnsynced gives up an optional kind of the pair whose informer did not
// sync within w.optionalSync: its handler and informer are removed.
func (w *infraWatches) dropUnsynced(p *pairWatch, h *infraHandler, reg toolscache.ResourceEventHandlerRegistration) {
	w.mu.Lock()
	done := w.done
	w.mu.Unlock()
	deadline := time.NewTimer(w.optionalSync)
	defer deadline.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
wait:
	for !reg.HasSynced() {
		select {
		case <-done:
			return
		case <-deadline.C:
			break wait
		case <-tick.C:
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pairs[p.key] != p || p.handlers[h.kind.name] != h || h.reg != reg || reg.HasSynced() {
		return
	}
	h.remove()
	h.absent = true
	_ = p.held.Cache.RemoveInformer(context.Background(), h.kind.newObj())
	w.log.Warnw("Not watching an infra kind whose informer did not sync (does the infra identity lack list and watch on it?)",
		"kind", h.kind.name, "infra", p.key.String(), "after", w.optionalSync)
}

// ownName names the Machine called like the object: its VM or VMI.
func ownName(_ context.Context, _ *pairWatch, obj any) []string {
	if o, err := meta.Accessor(obj); err == nil {
		return []string{o.GetName()}
	}
	return nil
}

// migratedVMI names the Machine of a migration's VMI.
func migratedVMI(_ context.Context, _ *pairWatch, obj any) []string {
	if m, ok := obj.(*kubevirtcorev1.VirtualMachineInstanceMigration); ok && m.Spec.VMIName != "" {
		return []string{m.Spec.VMIName}
	}
	return nil
}

// vmisOnNode names the Machines of the pair's VMIs on an infra Node.
func vmisOnNode(ctx context.Context, p *pairWatch, obj any) []string {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return nil
	}
	var vmis kubevirtcorev1.VirtualMachineInstanceList
	if err := p.held.Cache.List(ctx, &vmis, ctrlruntimeclient.MatchingFields{indexVMINode: node.Name}, ctrlruntimeclient.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	out := make([]string, 0, len(vmis.Items))
	for i := range vmis.Items {
		out = append(out, vmis.Items[i].Name)
	}
	return out
}

// vmiNode is the indexVMINode extractor.
func vmiNode(o ctrlruntimeclient.Object) []string {
	if vmi, ok := o.(*kubevirtcorev1.VirtualMachineInstance); ok {
		return []string{vmi.Status.NodeName}
	}
	return nil
}

// labelsChanged reports whether an infra Node update changed its labels.
func labelsChanged(old, obj any) bool {
	a, okOld := old.(*corev1.Node)
	b, okNew := obj.(*corev1.Node)
	return !okOld || !okNew || !maps.Equal(a.Labels, b.Labels)
}
