// Package tenant holds the rules every controller of the infra-controller
// shares about tenant namespaces: which infra namespaces belong to tenant
// clusters (Matcher), how a controller of tenant namespaces is set up
// (NamespaceController), how events on shared objects become one reconcile
// request per tenant namespace, which objects are ours (ManagedByLabel,
// IsManaged) and so where those controllers write them (Target, the
// apply.Target with that ownership rule), how a tenant namespace's
// configuration is read (ConfigMaps and Secrets by name) and how a user is
// told of an object in our way (WarnInTheWay).
//
// A tenant namespace is any namespace whose name starts with the configured
// prefix ("cluster-" by default), so a plain Kubermatic layout, where every
// user cluster owns namespace cluster-<id>, works without further setup.
//
// Reaching the tenant clusters themselves is package tenantconn.
package tenant
