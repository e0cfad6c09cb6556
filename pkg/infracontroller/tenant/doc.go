// Package tenant decides which infra namespaces belong to tenant clusters
// and turns events on shared objects into one reconcile request per tenant
// namespace.
//
// A tenant namespace is any namespace whose name starts with the configured
// prefix ("cluster-" by default), so a plain Kubermatic layout, where every
// user cluster owns namespace cluster-<id>, works without further setup.
package tenant
