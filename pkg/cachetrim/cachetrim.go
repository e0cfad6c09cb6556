// Package cachetrim holds the transforms of the machine-controller's
// informer caches: what a cached object keeps. Every cache drops
// metadata.managedFields, which nothing reads and every patch grows; beyond
// that each drops the large parts of the objects it holds one of per
// Machine that no reader looks at.
//
// Cached objects are only written back with patches computed against a
// cached copy, or built from scratch, so a dropped field is never written
// back empty. A reader that needs a dropped field must read the object
// directly, or the field must be kept here.
package cachetrim

import (
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// stripManagedFields is controller-runtime's transform that drops
// metadata.managedFields.
var stripManagedFields = cache.TransformStripManagedFields()

// Infra is the transform of the provider's infra-cluster caches. Besides
// managedFields it drops
//   - a VirtualMachine's spec.template (the VMI it starts; readers use its
//     metadata, spec.dataVolumeTemplates and status);
//   - a VirtualMachineInstance's spec, but for spec.evictionStrategy
//     (readers use its metadata, that field and status).
func Infra(obj any) (any, error) {
	return trim(obj, func(obj any) {
		switch o := obj.(type) {
		case *kubevirtcorev1.VirtualMachine:
			o.Spec.Template = nil
		case *kubevirtcorev1.VirtualMachineInstance:
			o.Spec = kubevirtcorev1.VirtualMachineInstanceSpec{EvictionStrategy: o.Spec.EvictionStrategy}
		}
	})
}

// User is the transform of the user-cluster cache. Besides managedFields
// it drops a Node's status.images, the container images its kubelet
// reports (up to 50, with their sizes): most of a real Node's size.
func User(obj any) (any, error) {
	return trim(obj, func(obj any) {
		if node, ok := obj.(*corev1.Node); ok {
			node.Status.Images = nil
		}
	})
}

// trim drops managedFields, then what drop drops.
func trim(obj any, drop func(any)) (any, error) {
	obj, err := stripManagedFields(obj)
	if err != nil {
		return nil, err
	}
	drop(obj)
	return obj, nil
}
