// Package controller wires the cluster.k8s.io controllers of
// machine-controller (Machines and MachineSets) into a controller-runtime
// manager, together with the optional watch on the infra cluster.
package controller
