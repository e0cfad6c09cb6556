// Package tenantcluster reconciles TenantClusters: each owns the infra
// namespace <prefix><id>, gets a copy of its tenant kubeconfig Secret there,
// and on deletion removes its VirtualMachines first, waits until they are
// gone, then deletes the namespace (and with it everything the other
// controllers created in it) and waits for that, before it releases its
// finalizer. Conditions report each step.
package tenantcluster
