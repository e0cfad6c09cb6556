// Package ownership holds what the MachineSet and MachineDeployment
// controllers share about owning objects: the selector an owner adopts by,
// and the controller owner reference it sets.
package ownership

import (
	"errors"
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
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
