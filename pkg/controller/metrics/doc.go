// Package metrics holds the Prometheus metrics of machine-controller:
// Machines by phase, one info series per Machine with the provider's labels,
// the latency and errors of provider operations, and the requests sent to
// infra clusters. They are registered on
// controller-runtime's registry and served on its metrics endpoint.
package metrics
