// Package csiaccess gives the KubeVirt CSI driver of each tenant cluster
// its access to the infra cluster: in every tenant namespace a
// ServiceAccount kubevirt-csi, a Role limited to what the driver needs
// there (hot-plugging DataVolumes into the tenant's VMs), a RoleBinding, a
// long-lived token Secret for the ServiceAccount and, once the token
// controller has filled that Secret, Secret kubevirt-csi-kubeconfig with a
// kubeconfig for the driver. The driver's controller, which runs in the
// tenant namespace (package csicontroller), mounts that kubeconfig and runs
// as the ServiceAccount; the tenant cluster itself gets no infra
// credentials.
//
// Every object carries the managed-by label of package tenant; objects
// without it are not seen (the caches select on the label) and never
// changed. Hand edits of ours are undone.
package csiaccess
