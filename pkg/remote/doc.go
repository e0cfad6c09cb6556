// Package remote builds the connections to remote clusters from their
// kubeconfigs, the same way for the provider's infra clusters and the
// infra-controller's tenant clusters: one REST config parsed by package
// kubeconfig, one client-side rate limiter and one transport for every
// request of the connection, an HTTP client with a timeout for requests and
// one without for watch streams, and one health state fed by the outcome of
// every request. On a connection it builds the REST mapper (once, shared),
// direct clients and informer caches, so every client and cache of a
// remote cluster shares its rate limiter, transport, health and discovery,
// and a failed list or watch of any of its caches is seen in one place.
//
// Kubeconfigs are credentials: a Connection keeps only their SHA-256, and no
// error of this package quotes them.
package remote
