// Package infracontroller assembles the infra-controller: the controllers
// that run against a KubeVirt infra cluster and prepare every tenant
// namespace (cluster-<id>) for the KubeVirt cloud provider.
//
// Each concern lives in its own package:
//   - tenant recognises tenant namespaces, maps events to them and holds
//     the ownership rule of every write;
//   - tenantconn reaches tenant clusters: connections, probes and watches;
//   - tenantcluster reconciles TenantClusters (namespace, kubeconfig,
//     ordered teardown);
//   - flavors keeps presets, instancetypes and preferences in sync;
//   - imagecache imports the named images and removes unused cache
//     DataVolumes;
//   - networks (and networks/vlan) turns the tenant-networks ConfigMap into
//     NetworkAttachmentDefinitions; vlan gives each TenantCluster a VLAN of
//     its own from the operator's range;
//   - netpol keeps the isolation NetworkPolicies;
//   - storageclass initializes storage classes in tenant clusters;
//   - componentaccess gives the KubeVirt CSI driver's controller and cloud
//     controller manager their infra access;
//   - tenantcomponents runs those components in each tenant namespace;
//   - csinodeplugin applies the CSI node plugin to tenant clusters;
//   - flags is the command line, shared with kubevirt-installer.
//
// Setup registers them with a controller-runtime manager whose cache was
// built with CacheOptions. See docs/infra-controller.md.
package infracontroller
