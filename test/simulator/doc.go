// Package simulator is a TEST COMPONENT that plays KubeVirt's and CDI's
// control loops where no container runtime exists: for every VirtualMachine
// it creates the DataVolumes of its dataVolumeTemplates and drives them to
// Succeeded, then creates the VirtualMachineInstance and drives it through
// Scheduled to Running with an IP address, all through the API server, as
// virt-controller, virt-handler and cdi-controller would. It never runs in
// production.
package simulator
