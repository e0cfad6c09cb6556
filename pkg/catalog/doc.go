// Package catalog lists what an infra namespace offers the MachineDeployments
// of its tenant cluster: flavors (VirtualMachineInstancePresets),
// instancetypes and preferences (namespaced and cluster-wide), storage
// classes, named images and networks - the choices a dashboard offers in
// its dropdowns, with what a providerSpec must say to use each. It only
// reads; kinds the infra cluster does not serve are reported as such.
package catalog
