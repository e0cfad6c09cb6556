// Package addons embeds the manifests the infra-controller applies to
// tenant clusters, as Go text/template files, and renders them into
// objects.
//
// kubevirt-csi/ holds the tenant-cluster side of the KubeVirt CSI driver:
// its namespace, the CSIDriver csi.kubevirt.io, the node plugin DaemonSet
// with its ServiceAccount and RBAC, and the Secret with the driver's infra
// kubeconfig (the one the csiaccess controller keeps in cluster-<id>). The
// tenant StorageClasses are kept by the storageclass controller.
package addons
