// Package kubevirt is the KubeVirt cloud provider: it implements
// cloudprovider.Provider by turning a Machine into a KubeVirt VirtualMachine
// (with its DataVolumeTemplates) and a cloud-init Secret on an infra
// cluster.
//
// The package does the provider's I/O and nothing else: the config package
// parses and resolves the spec, the vm package builds the objects as a pure
// function, and the infra package keeps one cached client per infra
// kubeconfig and namespace. Every infra read goes through informers, so Get
// costs no request once they are warm and Create costs only its writes; see
// docs/provider.md and docs/benchmarks.md.
package kubevirt
