// Package v1alpha1 holds the infra.kkp-kubevirt.io/v1alpha1 API of the
// infra-controller: TenantCluster, a cluster-scoped object on the infra
// cluster that describes one tenant cluster and owns its infra namespace
// cluster-<id>.
//
// +kubebuilder:object:generate=true
// +groupName=infra.kkp-kubevirt.io
package v1alpha1
