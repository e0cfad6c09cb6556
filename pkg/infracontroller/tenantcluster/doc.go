// Package tenantcluster reconciles TenantClusters: each owns the infra
// namespace <prefix><id>, gets a copy of its tenant kubeconfig Secret there,
// and on deletion removes its VirtualMachines first, waits until they are
// gone, then deletes the namespace (and with it everything the other
// controllers created in it) and waits for that, before it releases its
// finalizer. Conditions report each step.
//
// A reconcile reads the TenantCluster, makes sure of its finalizer (a
// patch), runs its phases, each returning what it found, computes the
// status once from that and writes it with one server-side apply of the
// status subresource, only when it changed. Namespaces, Secrets and
// ConfigMaps are created or changed with merge patches; nothing is
// written with an Update.
package tenantcluster
