// Package csinodeplugin applies the tenant-cluster side of the KubeVirt CSI driver
// (the manifests of the repository's addons/kubevirt-csi directory: the
// node plugin, which needs no infra access) to every tenant cluster whose
// kubeconfig Secret is in its tenant namespace, with package apply under
// field manager "infra-controller". The applied objects of every tenant
// cluster are watched (package tenant's Watches, our label only), and the
// watch cache decides what is written: nothing before it has synced, then
// only the objects it shows missing or different, so an unchanged tenant
// costs no request, and a field edited by hand or a deleted object is taken
// back within seconds; objects of our names without our label are left
// alone. The resync interval is a safety net. The infra kubeconfig Secret
// earlier releases put into tenant clusters is deleted. Apply is shared
// with the CSI controller's reconciler (package tenantcomponents).
package csinodeplugin
