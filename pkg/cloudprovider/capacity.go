package cloudprovider

import (
	"context"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"k8s.io/apimachinery/pkg/api/resource"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// NodeCapacity is what every Node made from a Machine template will have,
// as far as the provider can tell without creating one. The cluster
// autoscaler needs it to scale a MachineDeployment up from zero replicas,
// when there is no Node to look at.
type NodeCapacity struct {
	// CPU is the number of CPUs the Node reports; nil when unknown.
	CPU *resource.Quantity
	// Memory is the memory the guest sees; nil when unknown.
	Memory *resource.Quantity
	// EphemeralStorage is the size of the disk the Node's root file system
	// lives on; nil when unknown.
	EphemeralStorage *resource.Quantity
	// GPUType is the extended resource the Node advertises its GPUs as
	// (for example nvidia.com/gpu); "" without GPUs.
	GPUType string
	// GPUCount is the number of GPUs of GPUType.
	GPUCount int64
	// Labels are Node labels the provider's Machines get on top of the
	// template's spec.metadata.labels, for example the topology labels of
	// an explicit location; nil when none.
	Labels map[string]string
}

// CapacityProvider is implemented by providers that can tell the capacity
// of a Machine template's Nodes. It is optional: the MachineDeployment
// controller uses it when the provider implements it.
type CapacityProvider interface {
	// TemplateCapacity returns the capacity of the Nodes of spec. It may
	// read the infra cluster (sizes defined there, such as an
	// instancetype), from the API server rather than a cache, and writes
	// nothing. What it cannot tell (a reference the infra cluster lacks)
	// is left unset rather than reported as an error. A TerminalError
	// means spec is invalid; any other error is transient.
	TemplateCapacity(ctx context.Context, spec clusterv1alpha1.MachineSpec) (NodeCapacity, error)

	// CapacityObjects are the infra kinds TemplateCapacity reads, as
	// metadata-only objects for a watch: when one of them changes, the
	// capacity of templates that use it may have changed.
	CapacityObjects() []ctrlruntimeclient.Object
}
