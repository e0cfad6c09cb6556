package machine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// Node labels and annotations the controller sets.
const (
	// LabelOwnedBy on a Node holds the UID of its Machine.
	LabelOwnedBy = "machine-controller/owned-by"
	// AnnotationMachine on a Node holds <namespace>/<name> of its Machine.
	AnnotationMachine = "cluster.k8s.io/machine"
)

// Node cache indexes.
const (
	// IndexNodeProviderID indexes Nodes by spec.providerID, lower-cased.
	IndexNodeProviderID = "spec.providerID"
	// IndexNodeAddress indexes Nodes by each of their status.addresses.
	IndexNodeAddress = "status.addresses"
)

// nodeAddresses is the IndexNodeAddress extractor.
func nodeAddresses(obj ctrlruntimeclient.Object) []string {
	if node, ok := obj.(*corev1.Node); ok {
		return addressValues(node.Status.Addresses)
	}
	return nil
}

// nodeProviderID is the IndexNodeProviderID extractor.
func nodeProviderID(obj ctrlruntimeclient.Object) []string {
	node, ok := obj.(*corev1.Node)
	if !ok || node.Spec.ProviderID == "" {
		return nil
	}
	return []string{strings.ToLower(node.Spec.ProviderID)}
}

// findNode returns the Node of an instance: the one whose providerID
// matches, else the first (by name) having one of the addresses; nil when
// none has joined yet. Nodes labelled as owned by another Machine than
// owner are never returned.
func findNode(ctx context.Context, c ctrlruntimeclient.Reader, owner types.UID, providerID string, addresses []corev1.NodeAddress) (*corev1.Node, error) {
	mine := func(n *corev1.Node) bool {
		uid, ok := n.Labels[LabelOwnedBy]
		return !ok || uid == string(owner)
	}
	if providerID != "" {
		nodes := &corev1.NodeList{}
		if err := c.List(ctx, nodes, ctrlruntimeclient.MatchingFields{IndexNodeProviderID: strings.ToLower(providerID)}); err != nil {
			return nil, fmt.Errorf("failed to list Nodes by providerID: %w", err)
		}
		for i := range nodes.Items {
			if mine(&nodes.Items[i]) {
				return &nodes.Items[i], nil
			}
		}
	}
	// Read by index: listing every Node here would copy all of them for
	// each reconcile of a Machine whose VM has an address but no Node yet.
	var found *corev1.Node
	for _, address := range addressValues(addresses) {
		nodes := &corev1.NodeList{}
		if err := c.List(ctx, nodes, ctrlruntimeclient.MatchingFields{IndexNodeAddress: address}); err != nil {
			return nil, fmt.Errorf("failed to list Nodes by address: %w", err)
		}
		for i := range nodes.Items {
			if n := &nodes.Items[i]; mine(n) && (found == nil || n.Name < found.Name) {
				found = n
			}
		}
	}
	return found, nil
}

// addressValues returns the distinct values of addresses, in order.
func addressValues(addresses []corev1.NodeAddress) []string {
	var out []string
	for _, a := range addresses {
		if a.Address != "" && !slices.Contains(out, a.Address) {
			out = append(out, a.Address)
		}
	}
	return out
}

// syncNode applies to node what the Machine wants on it: the owner label,
// the Machine annotation, spec.metadata labels and annotations, and the
// spec taints (added, never removed). It reports whether node changed.
func syncNode(node *corev1.Node, machine *clusterv1alpha1.Machine) bool {
	labels := maps.Clone(machine.Spec.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelOwnedBy] = string(machine.UID)
	annotations := maps.Clone(machine.Spec.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationMachine] = machine.Namespace + "/" + machine.Name
	changed := mergeInto(&node.Labels, labels)
	changed = mergeInto(&node.Annotations, annotations) || changed
	for _, taint := range machine.Spec.Taints {
		if !slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&taint) && t.Value == taint.Value }) {
			node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&taint) })
			node.Spec.Taints = append(node.Spec.Taints, taint)
			changed = true
		}
	}
	return changed
}

// mergeInto sets every entry of want in *dst and reports a change.
func mergeInto(dst *map[string]string, want map[string]string) bool {
	changed := false
	for k, v := range want {
		if got, ok := (*dst)[k]; ok && got == v {
			continue
		}
		if *dst == nil {
			*dst = map[string]string{}
		}
		(*dst)[k] = v
		changed = true
	}
	return changed
}

// patchNode patches node with mutate's changes, if any.
func patchNode(ctx context.Context, c ctrlruntimeclient.Client, node *corev1.Node, mutate func(*corev1.Node) bool) error {
	base := node.DeepCopy()
	if !mutate(node) {
		return nil
	}
	if err := c.Patch(ctx, node, ctrlruntimeclient.MergeFrom(base)); err != nil {
		return fmt.Errorf("failed to patch Node %s: %w", node.Name, err)
	}
	return nil
}

// getNode returns the named Node, or nil when it does not exist.
func getNode(ctx context.Context, c ctrlruntimeclient.Reader, name string) (*corev1.Node, error) {
	node := &corev1.Node{}
	if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Name: name}, node); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("failed to get Node %s: %w", name, err)
	}
	return node, nil
}

// nodeConditions are the Machine's status.conditions: its Node's conditions
// (Ready, MemoryPressure, ...), as Kubermatic's machine-controller reports
// them, without heartbeat times, so that a heartbeat does not rewrite the
// Machine's status.
func nodeConditions(node *corev1.Node) []corev1.NodeCondition {
	if len(node.Status.Conditions) == 0 {
		return nil
	}
	out := make([]corev1.NodeCondition, 0, len(node.Status.Conditions))
	for _, c := range node.Status.Conditions {
		c.LastHeartbeatTime = metav1.Time{}
		out = append(out, c)
	}
	return out
}
