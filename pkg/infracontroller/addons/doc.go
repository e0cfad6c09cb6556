// Package addons applies the tenant-cluster side of the KubeVirt CSI driver
// (the manifests of the repository's addons/kubevirt-csi directory: the
// node plugin, which needs no infra access) to every tenant cluster whose
// kubeconfig Secret is in its tenant namespace, with server-side apply
// under field manager "infra-controller". Once the tenant's watch cache has
// synced, only the objects it shows missing or different are applied, so an
// unchanged tenant costs no request. The applied objects of every tenant
// cluster are watched (package tenant's Watches, our label only), so a
// field edited by hand or a deleted object is taken back within seconds;
// the resync interval is a safety net. The infra kubeconfig Secret earlier
// releases put into tenant clusters is deleted. Apply is shared with the
// CSI controller's reconciler (package csicontroller).
package addons
