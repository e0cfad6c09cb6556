package coalesce

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// OwnerChanged lets through the events of an owner itself that its
// reconcile acts on: every creation and deletion, and every update but one
// of its status alone. Its status is written by its own reconcile, once per
// window while its children change; reconciling that write again would read
// back what was just written and, for a MachineSet, list its Machines once
// more each time.
//
// An object whose generation is 0, or whose API bumps the generation with
// the status (a custom resource without the status subresource), has every
// update let through.
var OwnerChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	return !statusOnly(e.ObjectOld, e.ObjectNew)
}}

// statusOnly reports whether an update from a to b can have changed no more
// than b's status: the same generation and the same metadata but for the
// resource version and managed fields.
func statusOnly(a, b ctrlruntimeclient.Object) bool {
	if a == nil || b == nil || a.GetGeneration() == 0 || a.GetGeneration() != b.GetGeneration() {
		return false
	}
	return maps.Equal(a.GetLabels(), b.GetLabels()) &&
		maps.Equal(a.GetAnnotations(), b.GetAnnotations()) &&
		slices.Equal(a.GetFinalizers(), b.GetFinalizers()) &&
		equality.Semantic.DeepEqual(a.GetOwnerReferences(), b.GetOwnerReferences()) &&
		a.GetDeletionTimestamp().Equal(b.GetDeletionTimestamp())
}
