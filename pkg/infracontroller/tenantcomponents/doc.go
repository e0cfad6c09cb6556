// Package tenantcomponents runs per-tenant components on the infra cluster,
// each in its tenant namespace, with one controller per Component: the
// controller side of the KubeVirt CSI driver (CSI, addons
// kubevirt-csi-controller) and the KubeVirt cloud controller manager
// (CCM, addons kubevirt-ccm: a cloud-config ConfigMap and a Deployment).
// In every live tenant namespace that holds both the tenant kubeconfig
// Secret and the component's infra kubeconfig Secret (kept by package
// componentaccess for the component's profile), it applies the addon with
// server-side apply under field manager "infra-controller".
//
// The Deployments are watched, so a field of ours edited by hand, or a
// Deployment deleted, is taken back at once; the pods carry a hash of both
// kubeconfigs and of what else they read once at start (the CCM's
// cloud-config settings) and restart when one changes. When the tenant
// kubeconfig Secret goes away, the addon's objects are deleted; until the
// infra kubeconfig Secret exists, nothing is applied. A switched-off
// component's Deployments and ConfigMaps (and the CCM's cluster-wide access
// pair) are deleted once at start (SwitchedOff). Objects without the
// managed-by label of package tenant are never deleted.
//
// With snapshots on, the CSI driver is also given the infra snapshot class
// of each annotated infra StorageClass (storageclass.StorageClassEnforcement),
// and the infra StorageClasses are watched for it.
//
// The tenant cluster thus never holds infra credentials: it runs only the
// CSI node plugin (package csinodeplugin).
package tenantcomponents
