package machine

import (
	"context"
	"fmt"
	"maps"
	"strings"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Machine cache indexes.
const (
	// IndexMachineName indexes Machines by name, which is also the name of
	// their VirtualMachine.
	IndexMachineName = "machine.name"
	// IndexMachineUID indexes Machines by UID, the value of LabelOwnedBy.
	IndexMachineUID = "machine.uid"
	// IndexMachineAddress indexes Machines by each of their
	// status.addresses.
	IndexMachineAddress = "machine.status.addresses"
)

// kubevirtProviderIDPrefix starts the providerID of a KubeVirt Node.
const kubevirtProviderIDPrefix = "kubevirt://"

// cacheIndex is one index of the user cluster's cache.
type cacheIndex struct {
	obj     ctrlruntimeclient.Object
	field   string
	extract ctrlruntimeclient.IndexerFunc
}

// cacheIndexes are the user cluster's cache indexes the controller reads
// by.
var cacheIndexes = []cacheIndex{
	{&clusterv1alpha1.Machine{}, IndexMachineName, func(o ctrlruntimeclient.Object) []string { return []string{o.GetName()} }},
	{&clusterv1alpha1.Machine{}, IndexMachineUID, func(o ctrlruntimeclient.Object) []string { return []string{string(o.GetUID())} }},
	{&clusterv1alpha1.Machine{}, IndexMachineAddress, machineAddresses},
	{&corev1.Node{}, IndexNodeProviderID, nodeProviderID},
	{&corev1.Node{}, IndexNodeAddress, nodeAddresses},
}

// addIndexes registers cacheIndexes.
func addIndexes(ctx context.Context, mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	for _, i := range cacheIndexes {
		if err := idx.IndexField(ctx, i.obj, i.field, i.extract); err != nil {
			return fmt.Errorf("failed to index %T by %s: %w", i.obj, i.field, err)
		}
	}
	return nil
}

// machineAddresses is the IndexMachineAddress extractor.
func machineAddresses(obj ctrlruntimeclient.Object) []string {
	if machine, ok := obj.(*clusterv1alpha1.Machine); ok {
		return addressValues(machine.Status.Addresses)
	}
	return nil
}

// watchNodes enqueues the Machines of a changed Node (see machinesOfNode).
func watchNodes(b *builder.Builder, c ctrlruntimeclient.Reader) *builder.Builder {
	return b.Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj ctrlruntimeclient.Object) []reconcile.Request {
		node, ok := obj.(*corev1.Node)
		if !ok {
			return nil
		}
		return machinesOfNode(ctx, c, node)
	}), builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		oldNode, okOld := e.ObjectOld.(*corev1.Node)
		newNode, okNew := e.ObjectNew.(*corev1.Node)
		return !okOld || !okNew || nodeChanged(oldNode, newNode)
	}}))
}

// machinesOfNode returns the Machine owning node (by label), else the
// Machine of the VM named in its KubeVirt providerID, else the Machines
// without nodeRef that have one of the Node's addresses: the ones findNode
// could link it to. All are read by index, never by listing every Machine.
func machinesOfNode(ctx context.Context, c ctrlruntimeclient.Reader, node *corev1.Node) []reconcile.Request {
	if uid := node.Labels[LabelOwnedBy]; uid != "" {
		return machinesBy(ctx, c, ctrlruntimeclient.MatchingFields{IndexMachineUID: uid}, nil)
	}
	if strings.HasPrefix(strings.ToLower(node.Spec.ProviderID), kubevirtProviderIDPrefix) {
		name := node.Spec.ProviderID[len(kubevirtProviderIDPrefix):]
		return machinesBy(ctx, c, ctrlruntimeclient.MatchingFields{IndexMachineName: name}, nil)
	}
	unlinked := func(m *clusterv1alpha1.Machine) bool { return m.Status.NodeRef == nil }
	var out []reconcile.Request
	for _, address := range addressValues(node.Status.Addresses) {
		out = append(out, machinesBy(ctx, c, ctrlruntimeclient.MatchingFields{IndexMachineAddress: address}, unlinked)...)
	}
	return out
}

// nodeChanged reports whether a Node update matters to its Machine: what
// the controller syncs or links by, or its readiness. Heartbeats do not.
func nodeChanged(a, b *corev1.Node) bool {
	return !maps.Equal(a.Labels, b.Labels) || !maps.Equal(a.Annotations, b.Annotations) ||
		a.Spec.ProviderID != b.Spec.ProviderID || a.Spec.Unschedulable != b.Spec.Unschedulable ||
		!apiequality.Semantic.DeepEqual(a.Spec.Taints, b.Spec.Taints) ||
		!apiequality.Semantic.DeepEqual(a.Status.Addresses, b.Status.Addresses) ||
		readyStatus(a) != readyStatus(b) || a.DeletionTimestamp.IsZero() != b.DeletionTimestamp.IsZero()
}

// readyStatus returns the status of the Node's Ready condition.
func readyStatus(node *corev1.Node) corev1.ConditionStatus {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

// machinesBy lists Machines by a field selector (all when nil) and returns
// requests for those keep accepts (all when nil).
func machinesBy(ctx context.Context, c ctrlruntimeclient.Reader, fields ctrlruntimeclient.MatchingFields, keep func(*clusterv1alpha1.Machine) bool) []reconcile.Request {
	list := &clusterv1alpha1.MachineList{}
	var opts []ctrlruntimeclient.ListOption
	if fields != nil {
		opts = append(opts, fields)
	}
	if err := c.List(ctx, list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list Machines for a watch event")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if keep == nil || keep(&list.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: list.Items[i].Namespace, Name: list.Items[i].Name}})
		}
	}
	return out
}
