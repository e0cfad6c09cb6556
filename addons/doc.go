// Package addons embeds the manifests of the KubeVirt CSI driver and cloud
// controller manager as Go text/template files and renders them into
// objects.
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
// kubeconfig the componentaccess controller keeps and the tenant cluster with
// the tenant kubeconfig Secret.
//
// kubevirt-ccm/ holds the KubeVirt cloud controller manager of each tenant
// cluster, also applied to its tenant namespace on the infra cluster: its
// cloud-config ConfigMap and Deployment, reaching the infra cluster with
// the kubeconfig of the componentaccess controller's CCM profile and the tenant
// cluster with the tenant kubeconfig Secret.
//
// kubevirt-csi-storageclasses/ holds the tenant cluster's StorageClasses,
// one per initialized infra class (Params.StorageClasses); the
// storage-class controller renders it and keeps the result in every tenant
// cluster.
//
// kubevirt-csi-snapshot-crds/ holds the snapshot.storage.k8s.io CRDs,
// copied unchanged from external-snapshotter by make generate; with
// snapshots on, the storage-class controller creates the ones a tenant
// cluster lacks.
package addons
