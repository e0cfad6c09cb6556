// Package tenantconn reaches the tenant clusters of tenant namespaces: one
// connection per namespace, built with remote.Dial from the kubeconfig
// Secret in that namespace and rebuilt when the kubeconfig changes
// (Clients); the reconcilers' way to the client of a tenant namespace
// (Access); a probe whose outcome is the connection's health and the
// infra_controller_tenant_cluster_reachable metric (Probe, Health); and the
// watches of our objects in tenant clusters, turned into reconcile
// requests of their namespaces (Watches).
//
// Every request to a tenant cluster, whichever controller sends it, goes
// over the namespace's one connection: one transport, one rate limiter and
// one health per tenant cluster.
package tenantconn
