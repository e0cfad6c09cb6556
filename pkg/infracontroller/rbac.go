package infracontroller

// RBAC of infra-controller on the infra cluster, the source of
// charts/infra-controller/files/rbac/role.yaml (make generate).
//
// Tenant namespaces are found by name prefix, so every namespaced kind is
// read cluster-wide (the caches select only tenant kubeconfig Secrets and
// labelled objects, but list and watch RBAC cannot be narrowed by label).
// Objects the controllers own are created, then written with server-side
// apply (package apply), which is a patch.
// Flavors: VirtualMachineInstancePresets, instancetypes and preferences are
// created, updated and deleted in tenant namespaces. Storage classes: read
// here, written in the tenant clusters with the tenants' kubeconfigs. CSI
// access: ServiceAccounts, Roles, RoleBindings and Secrets are created and
// updated; the controller holds the rules of the Role it creates, since the
// API server only lets it grant what it has. Image cache: the ConfigMap
// listing the images, and the DataVolumes it pre-allocates. Tenant
// networks and network policies: NetworkAttachmentDefinitions and
// NetworkPolicies are created, updated and deleted in tenant namespaces from
// the ConfigMaps that describe them. TenantClusters: their namespaces are
// created, labelled and deleted, their VirtualMachines deleted first, their
// kubeconfig Secrets read and copied, their images, networks and policies
// written to the ConfigMaps the other controllers read. CSI controller and
// CCM: one Deployment (and for the CCM one cloud-config ConfigMap) per
// tenant namespace is applied (server-side apply is a patch) and deleted.
// CCM access: the controller holds the rules of the CCM's Role (Services,
// VirtualMachineInstances) and ClusterRole (reading Nodes). The CSI
// driver's ClusterRole reads PersistentVolumes. The controller keeps one
// ClusterRole and ClusterRoleBinding per profile (changed and deleted only
// by those names), deleting them when no tenant namespace is left. VLANs: one Lease
// per claimed VLAN id is created and deleted in the namespace of the
// leader-election Lease (the chart passes it as the claim namespace), and
// each TenantCluster's NetworkAttachmentDefinition is written. The
// namespace "leader-election" is a placeholder the chart replaces with the
// namespace of the Lease.
//
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=kubevirt.io,resources=virtualmachineinstancepresets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=instancetype.kubevirt.io,resources=virtualmachineinstancetypes;virtualmachinepreferences,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=secrets;serviceaccounts,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles;clusterrolebindings,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles;clusterrolebindings,verbs=update;patch;delete,resourceNames=kkp-kubevirt:kubevirt-csi;kkp-kubevirt:kubevirt-cloud-controller-manager
// +kubebuilder:rbac:groups="",resources=services,verbs=get;create;update;delete
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get
// +kubebuilder:rbac:groups=cdi.kubevirt.io,resources=datavolumes,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=kubevirt.io,resources=virtualmachines;virtualmachineinstances,verbs=get;list;watch
// +kubebuilder:rbac:groups=kubevirt.io,resources=virtualmachines,verbs=delete
// +kubebuilder:rbac:groups=infra.kkp-kubevirt.io,resources=tenantclusters,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=infra.kkp-kubevirt.io,resources=tenantclusters/status;tenantclusters/finalizers,verbs=update
// +kubebuilder:rbac:groups=infra.kkp-kubevirt.io,resources=tenantclusters;tenantclusters/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=namespaces;secrets;configmaps,verbs=patch
// +kubebuilder:rbac:groups=subresources.kubevirt.io,resources=virtualmachines/addvolume;virtualmachines/removevolume;virtualmachineinstances/removevolume,verbs=update
// +kubebuilder:rbac:groups=snapshot.storage.k8s.io,resources=volumesnapshots,verbs=get;list;create;delete
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;patch
// +kubebuilder:rbac:groups="",resources=persistentvolumes,verbs=get
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=k8s.cni.cncf.io,resources=network-attachment-definitions,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;delete,namespace=leader-election
