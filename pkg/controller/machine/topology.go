package machine

import (
	"maps"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"

	corev1 "k8s.io/api/core/v1"
)

// located is an instance that knows the topology labels of where it runs
// (topology.kubernetes.io/region and zone); the KubeVirt provider's
// instances take them from their VM.
type located interface {
	Topology() map[string]string
}

// topologyOf returns the topology labels of an instance, nil when its
// provider reports none.
func topologyOf(inst cloudprovider.Instance) map[string]string {
	if l, ok := inst.(located); ok {
		return maps.Clone(l.Topology())
	}
	return nil
}

// syncTopology sets the topology labels on node that it does not carry
// yet. A value already there is kept: it came from the Machine's
// spec.metadata.labels, a cloud controller manager, a person or an earlier
// reconcile, and the controller does not fight over it.
func syncTopology(node *corev1.Node, topology map[string]string) bool {
	changed := false
	for key, value := range topology {
		if _, ok := node.Labels[key]; ok || value == "" {
			continue
		}
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		node.Labels[key] = value
		changed = true
	}
	return changed
}
