// Package machine reconciles cluster.k8s.io/v1alpha1 Machines: it creates
// the cloud instance through a cloudprovider.Provider, links the Node that
// joins, keeps the Machine's labels, annotations and taints on that Node,
// reports terminal errors on the Machine and cleans up on deletion.
package machine
