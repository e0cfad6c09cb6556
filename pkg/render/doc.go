// Package render shows what a Machine, MachineSet or MachineDeployment becomes
// on the infra cluster: for each object it prints the VirtualMachine, the
// cloud-init Secret and the SSH Service (when the spec asks for one) that one
// Machine of it would get, exactly as the provider would build them. Without
// an infra cluster it touches no cluster at all.
package render
