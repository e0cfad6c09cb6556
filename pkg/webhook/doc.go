// Package webhook serves the admission webhook of the machine-controller:
// mutating and validating admission for cluster.k8s.io/v1alpha1
// MachineDeployments, MachineSets and Machines. The mutating side fills the
// provider's defaults into a providerSpec and removes the one-shot bypass
// annotation of Machines; the validating side checks providerSpecs through
// the KubeVirt provider and the rules of MachineDeployment and MachineSet
// specs, and returns the provider's warnings as admission warnings.
package webhook
