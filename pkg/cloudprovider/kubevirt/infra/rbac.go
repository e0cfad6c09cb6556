package infra

// RBAC of the provider on the infra cluster, the source of
// charts/machine-controller/files/rbac/infra/role.yaml (make generate). It
// must equal the block of docs/provider.md that TestRBACFromDocs applies;
// a test in the charts package compares the two.
//
// Namespaced kinds are read and written in the infra namespace, for which
// "infra-namespace" is a placeholder the chart replaces; cluster-scoped
// kinds are only read. list and watch are what the informers need, get the
// direct reads. DataVolumes are created, and cloned from the image cache
// (datavolumes/source), for disks that use it. The machine-controller uses the
// same identity to evacuate VMIs whose infra node drains: it deletes a VMI
// (eviction strategy External) or creates a VirtualMachineInstanceMigration
// (LiveMigrate), and it watches the migrations of the namespace (list,
// watch) so that their changes reach the Machines of their VMIs; without
// that permission it stops watching them after 30 s and says so once.
// With --infra-node-labels-configmap it also watches the
// infra Nodes, whose labels it copies to the user cluster's Nodes. Services
// are the SSH Services of VMs whose spec sets virtualMachine.sshService:
// created, patched (owner reference, drift) and deleted; Secrets are also
// updated, Services never.
//
// +kubebuilder:rbac:groups=kubevirt.io,resources=virtualmachines,verbs=get;list;watch;create;delete,namespace=infra-namespace
// +kubebuilder:rbac:groups=kubevirt.io,resources=virtualmachineinstances,verbs=get;list;watch;delete,namespace=infra-namespace
// +kubebuilder:rbac:groups=kubevirt.io,resources=virtualmachineinstancepresets,verbs=get;list;watch,namespace=infra-namespace
// +kubebuilder:rbac:groups=kubevirt.io,resources=virtualmachineinstancemigrations,verbs=list;watch;create,namespace=infra-namespace
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete,namespace=infra-namespace
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch;delete,namespace=infra-namespace
// +kubebuilder:rbac:groups=cdi.kubevirt.io,resources=datavolumes,verbs=get;list;watch;create,namespace=infra-namespace
// +kubebuilder:rbac:groups=cdi.kubevirt.io,resources=datavolumes/source,verbs=create,namespace=infra-namespace
// +kubebuilder:rbac:groups=instancetype.kubevirt.io,resources=virtualmachineinstancetypes;virtualmachinepreferences,verbs=get;list;watch,namespace=infra-namespace
// +kubebuilder:rbac:groups=k8s.cni.cncf.io,resources=network-attachment-definitions,verbs=get;list;watch,namespace=infra-namespace
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=cdi.kubevirt.io,resources=storageprofiles,verbs=get;list;watch
// +kubebuilder:rbac:groups=instancetype.kubevirt.io,resources=virtualmachineclusterinstancetypes;virtualmachineclusterpreferences,verbs=get;list;watch
