// Package simulator is a TEST COMPONENT that plays KubeVirt's and CDI's
// control loops where no container runtime exists: for every VirtualMachine
// it creates the DataVolumes of its dataVolumeTemplates and drives them to
// Succeeded, then creates the VirtualMachineInstance and drives it through
// Scheduled to Running with an IP address, all through the API server, as
// virt-controller, virt-handler and cdi-controller would. Given a client of
// a user cluster (Options.UserClient) it also plays the guests' kubelets: a
// Ready Node per running VMI, removed when the VM goes. It never runs in
// production.
package simulator
