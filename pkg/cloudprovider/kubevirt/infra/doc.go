// Package infra owns the connections to KubeVirt infra clusters: one cached
// client per (kubeconfig, namespace), shared by every provider call.
//
// A Client reads through informers (a controller-runtime cache scoped to the
// infra namespace for namespaced kinds, and one cluster-wide cache per
// kubeconfig for cluster-scoped kinds such as StorageClasses, StorageProfiles
// and cluster instancetypes) and writes directly. Kinds the infra cluster
// does not serve (for example instancetype.kubevirt.io/v1alpha1 on recent
// KubeVirt releases) read as "not found" instead of starting informers that
// can never sync.
//
// Kubeconfigs are credentials: this package never logs or prints them, and
// keys its cache by their SHA-256 digest.
package infra
