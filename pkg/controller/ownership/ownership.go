// Package ownership holds what the MachineSet and MachineDeployment
// controllers share about owning objects: the selector an owner adopts by,
// the controller owner reference it sets, and the owners an orphan may be
// adopted by.
package ownership

import (
	"context"
	"errors"
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Selector returns an owner's selector. An empty selector, or one its
// template's labels do not match, is an error: the owner would adopt
// everything, or create objects forever.
func Selector(selector *metav1.LabelSelector, templateLabels map[string]string) (labels.Selector, error) {
	s, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return nil, fmt.Errorf("invalid spec.selector: %w", err)
	}
	if s.Empty() {
		return nil, errors.New("spec.selector must not be empty")
	}
	if !s.Matches(labels.Set(templateLabels)) {
		return nil, errors.New("spec.selector does not match spec.template.metadata.labels")
	}
	return s, nil
}

// ControllerRef is the controller owner reference of a cluster.k8s.io
// object of the given kind.
func ControllerRef(kind string, owner metav1.Object) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         clusterv1alpha1.SchemeGroupVersion.String(),
		Kind:               kind,
		Name:               owner.GetName(),
		UID:                owner.GetUID(),
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}

// OrphanRequests returns, for an object without a controller, the requests
// of the owners in its namespace (items of list, read from reader) whose
// selector matches its labels: the owners that may adopt it. Owners with
// an invalid selector are skipped; a failed list is logged and yields none,
// since the next event of the object tries again.
func OrphanRequests[T ctrlruntimeclient.Object](ctx context.Context, reader ctrlruntimeclient.Reader, obj ctrlruntimeclient.Object,
	list ctrlruntimeclient.ObjectList, selectorOf func(T) (labels.Selector, error),
) []reconcile.Request {
	if metav1.GetControllerOf(obj) != nil {
		return nil
	}
	if err := reader.List(ctx, list, ctrlruntimeclient.InNamespace(obj.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list the possible owners of an orphan", "orphan", obj.GetName())
		return nil
	}
	var out []reconcile.Request
	_ = meta.EachListItem(list, func(item runtime.Object) error {
		owner, ok := item.(T)
		if !ok {
			return nil
		}
		if s, err := selectorOf(owner); err == nil && s.Matches(labels.Set(obj.GetLabels())) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: owner.GetName()}})
		}
		return nil
	})
	return out
}
