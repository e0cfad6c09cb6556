// Package simulator is a TEST COMPONENT that plays KubeVirt's and CDI's
// control loops where no container runtime exists: for every VirtualMachine
// it creates the DataVolumes of its dataVolumeTemplates and drives them to
// Succeeded, then creates the VirtualMachineInstance and drives it through
// Scheduled to Running with an IP address, all through the API server, as
// virt-controller, virt-handler and cdi-controller would. Given a client of
// a user cluster (Options.UserClient) it also plays the guests' kubelets: a
// Ready Node per running VMI (not ready while the VMI does not run),
// removed when the VM goes. Like KubeVirt it restarts the ended VMI of a VM
// of run strategy Always (StopVMI ends one, optionally for good); Evacuate
// plays an infra node drain (status.evacuationNodeName), and
// VirtualMachineInstanceMigrations are completed by moving the VMI to the
// other simulated infra node. With Options.ImportHTTP an HTTP DataVolume
// import really downloads its URL (test/importer) before it succeeds, so a
// local image server can count the bytes. It never runs in production.
package simulator
