// Package componentaccess gives components that run for a tenant cluster in its
// tenant namespace their access to the infra cluster, one Profile per
// component: the KubeVirt CSI driver's controller (CSI) and the KubeVirt
// cloud controller manager (CCM). For every profile, each tenant namespace
// gets a ServiceAccount, a Role limited to what the component needs there,
// a RoleBinding, a long-lived token Secret for the ServiceAccount and,
// once the token controller has filled that Secret, a Secret with a
// kubeconfig for the component. The CSI profile keeps the names it always
// had (kubevirt-csi, kubevirt-csi-token, kubevirt-csi-kubeconfig); the CCM
// profile's are named kubevirt-cloud-controller-manager likewise.
//
// A profile with cluster-wide rules (the CCM reads infra Nodes for their
// zone and region, the CSI driver the PersistentVolume of a claim it
// expands) gets one ClusterRole and one ClusterRoleBinding on the
// infra cluster, kept by ClusterReconciler: the binding's subjects are the
// profile's ServiceAccounts of all live tenant namespaces, and both are
// deleted when none is left.
//
// The components (package tenantcomponents) mount the kubeconfig and run as
// the ServiceAccount; the tenant cluster itself gets no infra credentials.
//
// Every object carries the managed-by label of package tenant; objects
// without it are not seen (the caches select on the label) and never
// changed. Hand edits of ours are undone. A profile switched off keeps the
// objects made earlier.
package componentaccess
