package infra

import (
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// stripManagedFields is controller-runtime's transform that drops
// metadata.managedFields, which nothing here reads.
var stripManagedFields = cache.TransformStripManagedFields()

// trimForCache is the transform of every infra cache. Besides
// managedFields it drops what no reader of a cached VM or VMI looks at and
// what makes up most of their size, one VM and one VMI per Machine:
//   - a VirtualMachine's spec.template (the VMI it starts; readers use its
//     metadata, spec.dataVolumeTemplates and status);
//   - a VirtualMachineInstance's spec, but for spec.evictionStrategy
//     (readers use its metadata, that field and status).
//
// Objects are only ever written with patches computed against a cached copy
// or built from scratch, so a trimmed field is never written back empty.
func trimForCache(obj any) (any, error) {
	obj, err := stripManagedFields(obj)
	if err != nil {
		return nil, err
	}
	switch o := obj.(type) {
	case *kubevirtcorev1.VirtualMachine:
		o.Spec.Template = nil
	case *kubevirtcorev1.VirtualMachineInstance:
		o.Spec = kubevirtcorev1.VirtualMachineInstanceSpec{EvictionStrategy: o.Spec.EvictionStrategy}
	}
	return obj, nil
}
