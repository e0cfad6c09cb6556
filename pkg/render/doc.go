// Package render shows what a Machine, MachineSet or MachineDeployment becomes
// on the infra cluster: for each object it prints the VirtualMachine and the
// cloud-init Secret that one Machine of it would get, exactly as the provider
// would build them. Without an infra cluster it touches no cluster at all.
package render
