// Package controller wires the cluster.k8s.io controllers of
// machine-controller (Machines, MachineSets and MachineDeployments) into a
// controller-runtime manager, together with the optional watch on the
// infra cluster.
package controller
