package machine

import (
	"context"
	"fmt"
	"slices"

	"k8c.io/machine-controller/sdk/apis/cluster/common"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// reconcileDelete cordons the Node, has the provider clean up until done,
// deletes the Node and removes the finalizers in that order.
func (r *reconciler) reconcileDelete(ctx context.Context, s *scope) (reconcile.Result, error) {
	nodes, err := r.nodesOf(ctx, s.machine)
	if err != nil {
		return reconcile.Result{}, err
	}
	for i := range nodes {
		if err := patchNode(ctx, r.client, &nodes[i], cordon); err != nil {
			return reconcile.Result{}, err
		}
	}
	pending, err := r.drainNodes(ctx, s, nodes)
	if err != nil {
		// Retried on the poll interval, not with the queue's growing
		// backoff (controller-runtime ignores a requeue returned with an
		// error), so that the drain timeout holds.
		s.log.Error(err, "Failed to drain; retrying", "after", pollDrain)
		r.recorder.Eventf(s.machine, nil, corev1.EventTypeWarning, ReasonDrainFailed, "Drain", "%v", err)
		return reconcile.Result{RequeueAfter: pollDrain}, nil
	}
	if pending {
		return reconcile.Result{RequeueAfter: pollDrain}, nil
	}
	if controllerutil.ContainsFinalizer(s.machine, FinalizerDelete) {
		done, err := r.provider.Cleanup(ctx, s.log, s.machine, s.data)
		if err != nil {
			return reconcile.Result{}, fmt.Errorf("failed to clean up the instance (remove finalizer %s by hand to skip): %w",
				FinalizerDelete, withReason(err, common.DeleteMachineError))
		}
		if !done {
			return reconcile.Result{RequeueAfter: pollCleanup}, nil
		}
		if err := r.removeFinalizer(ctx, s.machine, FinalizerDelete); err != nil {
			return reconcile.Result{}, err
		}
	}
	if !controllerutil.ContainsFinalizer(s.machine, FinalizerNodeDelete) {
		return reconcile.Result{}, nil
	}
	for i := range nodes {
		if err := r.client.Delete(ctx, &nodes[i]); ctrlruntimeclient.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, fmt.Errorf("failed to delete Node %s: %w", nodes[i].Name, err)
		}
	}
	s.machine.Status.NodeRef = nil
	if err := r.removeFinalizer(ctx, s.machine, FinalizerNodeDelete); err != nil {
		return reconcile.Result{}, err
	}
	// The Machine goes with its last finalizer: its infra namespace is no
	// longer watched for it.
	r.watches.forget(ctrlruntimeclient.ObjectKeyFromObject(s.machine))
	return reconcile.Result{}, nil
}

// drainNodes evicts the pods of the Machine's Nodes and reports whether
// any is still to go. Once the drain timeout passed, or for Nodes not
// Ready, the deletion goes on without waiting.
func (r *reconciler) drainNodes(ctx context.Context, s *scope, nodes []corev1.Node) (bool, error) {
	if r.drainTimeout < 0 || s.machine.DeletionTimestamp == nil {
		return false, nil
	}
	now := r.now()
	pending := false
	for i := range nodes {
		node := &nodes[i]
		if !shouldDrain(node, s.machine.DeletionTimestamp.Time, now, r.drainTimeout) {
			continue
		}
		state, err := drain(ctx, r.client, r.pods, node, now)
		if err != nil {
			return true, err
		}
		if state.pending > 0 {
			s.log.Debugw("Draining Node", "node", node.Name, "pending", state.pending, "blocked", state.blocked)
			pending = true
		}
	}
	return pending, nil
}

// nodesOf returns the Nodes of a Machine: the one of status.nodeRef, every
// Node labelled as owned by the Machine, and a Node of its VM that joined
// but was not linked yet (and is owned by no other Machine).
func (r *reconciler) nodesOf(ctx context.Context, machine *clusterv1alpha1.Machine) ([]corev1.Node, error) {
	list := &corev1.NodeList{}
	if err := r.client.List(ctx, list, ctrlruntimeclient.MatchingLabels{LabelOwnedBy: string(machine.UID)}); err != nil {
		return nil, fmt.Errorf("failed to list the Nodes of the Machine: %w", err)
	}
	nodes := list.Items
	unlinked, err := findNode(ctx, r.client, machine.UID, kubevirtProviderIDPrefix+machine.Name, nil)
	if err != nil {
		return nil, err
	}
	if unlinked != nil && !slices.ContainsFunc(nodes, func(n corev1.Node) bool { return n.Name == unlinked.Name }) {
		nodes = append(nodes, *unlinked)
	}
	if ref := machine.Status.NodeRef; ref != nil {
		for _, n := range nodes {
			if n.Name == ref.Name {
				return nodes, nil
			}
		}
		node, err := getNode(ctx, r.client, ref.Name)
		if err != nil {
			return nil, err
		}
		if node != nil {
			nodes = append(nodes, *node)
		}
	}
	return nodes, nil
}

// cordon marks a Node unschedulable.
func cordon(node *corev1.Node) bool {
	if node.Spec.Unschedulable {
		return false
	}
	node.Spec.Unschedulable = true
	return true
}

// removeFinalizer removes one finalizer from the Machine.
func (r *reconciler) removeFinalizer(ctx context.Context, machine *clusterv1alpha1.Machine, finalizer string) error {
	if !controllerutil.ContainsFinalizer(machine, finalizer) {
		return nil
	}
	err := r.updater(ctx)(machine, func(m *clusterv1alpha1.Machine) { controllerutil.RemoveFinalizer(m, finalizer) })
	return ctrlruntimeclient.IgnoreNotFound(err)
}
