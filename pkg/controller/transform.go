package controller

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// stripManagedFields is controller-runtime's transform that drops
// metadata.managedFields: never read, and every patch of a Machine or Node
// would grow its cached copy.
var stripManagedFields = cache.TransformStripManagedFields()

// trimForCache is the transform of the user cluster's cache. Besides
// managedFields it drops a Node's status.images, the container images a
// kubelet reports (up to 50, with their sizes): nothing here reads them,
// and they are most of a real Node's size, one Node per Machine. Nodes are
// only written with patches computed against a cached copy, so the images
// are never written back empty.
func trimForCache(obj any) (any, error) {
	obj, err := stripManagedFields(obj)
	if err != nil {
		return nil, err
	}
	if node, ok := obj.(*corev1.Node); ok {
		node.Status.Images = nil
	}
	return obj, nil
}
