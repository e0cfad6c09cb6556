package controller

// RBAC of machine-controller on the user cluster, the source of
// charts/machine-controller/files/rbac/user/role.yaml (make generate).
//
// The manager's client caches every kind it reads, so reads are
// cluster-wide get, list and watch, except Secrets and ConfigMaps: they are
// read one at a time, uncached (RunOptions disables their cache), so only
// "get" is granted: the Secret and ConfigMap key references of
// providerSpecs, which may name any namespace. The operating-system-manager
// bootstrap Secrets are read from a cache of the namespace
// cloud-init-settings alone, hence list and watch there (the chart grants
// them with rbac.bootstrapSecrets; without them the controller reads those
// Secrets one by one too). Pods are listed from the API server by Node (no cache), and
// evicted through the eviction subresource. Events go through the core API
// (package coreevents), as Kubermatic's ClusterRole for machine-controller
// grants events only there.
// The namespace "leader-election" is a placeholder the chart replaces with
// the namespace of the Lease; ConfigMaps there are also listed and watched
// for the one --infra-node-labels-configmap names.
//
// The node CSR approver (package nodecsr) reads CertificateSigningRequests
// from the cache and writes their Approved or Denied condition through the
// approval subresource; the API server also wants the "approve" verb on the
// signer the request names, granted for kubernetes.io/kubelet-serving alone.
//
// +kubebuilder:rbac:groups=cluster.k8s.io,resources=machines;machinesets;machinedeployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cluster.k8s.io,resources=machines/status;machinesets/status;machinedeployments/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=cluster.k8s.io,resources=machines/finalizers;machinesets/finalizers;machinedeployments/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=list
// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create
// +kubebuilder:rbac:groups="",resources=secrets;configmaps,verbs=get
// +kubebuilder:rbac:groups="",resources=secrets,verbs=list;watch,namespace=cloud-init-settings
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update,namespace=leader-election
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=list;watch,namespace=leader-election
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests,verbs=get;list;watch
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests/approval,verbs=update
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=signers,verbs=approve,resourceNames=kubernetes.io/kubelet-serving
