// Package addons embeds the manifests of the KubeVirt CSI driver as Go
// text/template files and renders them into objects.
//
// kubevirt-csi/ holds the tenant-cluster side, which the infra-controller
// applies to every tenant cluster: the driver's namespace, the CSIDriver
// csi.kubevirt.io, the node plugin DaemonSet with its ServiceAccount and
// RBAC, and a ConfigMap naming the infra namespace. It holds no infra
// credentials: the node plugin needs no infra access.
//
// kubevirt-csi-controller/ holds the infra-cluster side, which the
// infra-controller applies to every tenant namespace on the infra cluster:
// the CSI controller Deployment, reaching the infra cluster with the
// kubeconfig the csiaccess controller keeps and the tenant cluster with
// the tenant kubeconfig Secret. The tenant StorageClasses are kept by the
// storage-class controller.
package addons
