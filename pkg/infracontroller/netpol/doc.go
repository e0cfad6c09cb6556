// Package netpol keeps the NetworkPolicies of every tenant namespace: the
// default isolation policies (ingress only from the same namespace; egress
// to the same namespace, DNS and the Internet, so not to other tenant
// namespaces), the default policies letting CDI importers reach image
// servers and the tenant's CSI controller reach the infra and tenant API
// servers, and the custom policies listed in ConfigMap network-policies.
// NetworkPolicies it did not create are never touched.
package netpol
