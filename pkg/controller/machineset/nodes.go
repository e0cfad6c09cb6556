package machineset

import (
	"context"
	"strings"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// annotationMachine is what the Machine controller writes on a Node it
// linked: "<namespace>/<name>" of the Machine.
const annotationMachine = "cluster.k8s.io/machine"

// setOfNode maps a Node to the MachineSet of its Machine: the readiness of
// Nodes makes the readyReplicas and availableReplicas of the status, and
// it changes without any change of the Machine (a VM restarting).
func (r *reconciler) setOfNode(ctx context.Context, obj ctrlruntimeclient.Object) []reconcile.Request {
	namespace, name, ok := strings.Cut(obj.GetAnnotations()[annotationMachine], "/")
	if !ok {
		return nil
	}
	m := &clusterv1alpha1.Machine{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, m); err != nil {
		return nil
	}
	ref := metav1.GetControllerOf(m)
	if ref == nil || ref.Kind != "MachineSet" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: namespace, Name: ref.Name}}}
}

// nodeReadinessChanged passes Node creations, deletions and the updates
// that change its Ready condition.
var nodeReadinessChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	oldNode, okOld := e.ObjectOld.(*corev1.Node)
	newNode, okNew := e.ObjectNew.(*corev1.Node)
	return !okOld || !okNew || nodeReady(oldNode) != nodeReady(newNode) ||
		oldNode.Annotations[annotationMachine] != newNode.Annotations[annotationMachine]
}}

// nodeReady reports whether a Node's Ready condition is True.
func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
