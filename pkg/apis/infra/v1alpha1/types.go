package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Finalizer holds a TenantCluster until its VirtualMachines, what the
// controller made in the tenant cluster and its namespace are gone.
const Finalizer = "infra.kkp-kubevirt.io/tenant-cluster"

// SkipTenantCleanupAnnotation set to "true" on a TenantCluster that is
// being deleted skips removing what the controller made in the tenant
// cluster: for a tenant cluster that is already gone or unreachable.
const SkipTenantCleanupAnnotation = "infra.kkp-kubevirt.io/skip-tenant-cleanup"

// TenantClusterSpec describes a tenant cluster.
type TenantClusterSpec struct {
	// ID is the tenant cluster's id; its infra namespace is cluster-<id>
	// (the controller's namespace prefix followed by the id).
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="id is immutable"
	ID string `json:"id"`
	// KubeconfigSecretRef names the infra Secret that holds the tenant
	// cluster's kubeconfig. The controller copies it into the tenant
	// namespace, where the storage-class controller reads it.
	// +optional
	KubeconfigSecretRef *SecretKeyReference `json:"kubeconfigSecretRef,omitempty"`
	// Options are the per-cluster switches.
	// +optional
	Options TenantClusterOptions `json:"options,omitempty"`
	// Images are the named images of the cluster, each imported once into
	// its namespace. They are written to ConfigMap image-cache there.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Images []Image `json:"images,omitempty"`
	// Networks are the tenant networks, NetworkAttachmentDefinitions in its
	// namespace. They are written to ConfigMap tenant-networks there.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Networks []Network `json:"networks,omitempty"`
	// NetworkPolicies are custom NetworkPolicies of its namespace, kept
	// beside the defaults. They are written to ConfigMap network-policies
	// there.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	NetworkPolicies []NetworkPolicy `json:"networkPolicies,omitempty"`
}

// TenantClusterOptions switch features off for one tenant cluster. An
// unset or true switch keeps the controller's setting (its flag); false
// turns the feature off here and deletes what it made in the namespace.
type TenantClusterOptions struct {
	// Presets offers the copied presets and kubermatic-standard.
	// +optional
	Presets *bool `json:"presets,omitempty"`
	// Instancetypes offers the standard instancetypes.
	// +optional
	Instancetypes *bool `json:"instancetypes,omitempty"`
	// Preferences offers the standard preferences.
	// +optional
	Preferences *bool `json:"preferences,omitempty"`
	// DefaultNetworkPolicies keeps the default isolation policies.
	// +optional
	DefaultNetworkPolicies *bool `json:"defaultNetworkPolicies,omitempty"`
}

// SecretKeyReference names one key of a Secret.
type SecretKeyReference struct {
	// Namespace is the Secret's namespace.
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`
	// Name is the Secret's name.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Key is the data key holding the kubeconfig; "kubeconfig" when
	// empty.
	// +optional
	Key string `json:"key,omitempty"`
}

// TenantClusterStatus is the observed state of a TenantCluster.
type TenantClusterStatus struct {
	// Namespace is the infra namespace of the tenant cluster.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Conditions report the namespace, the kubeconfig copy and a
	// deletion's progress.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// VLAN is the VLAN claimed for the tenant cluster's network; unset
	// while none is claimed.
	// +optional
	VLAN *VLANStatus `json:"vlan,omitempty"`
}

// VLANStatus is the VLAN of a tenant cluster.
type VLANStatus struct {
	// ID is the VLAN id, unique among the TenantClusters of the infra
	// cluster.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4094
	ID int32 `json:"id"`
	// NetworkAttachmentDefinition names the network on that VLAN in the
	// tenant namespace, the name MachineDeployments attach.
	NetworkAttachmentDefinition string `json:"networkAttachmentDefinition"`
}

// TenantCluster describes one tenant cluster on the infra cluster and owns
// its infra namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=tc
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="ID",type=string,JSONPath=`.spec.id`
// +kubebuilder:printcolumn:name="Namespace",type=string,JSONPath=`.status.namespace`
// +kubebuilder:printcolumn:name="VLAN",type=integer,JSONPath=`.status.vlan.id`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type TenantCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec describes the tenant cluster.
	Spec TenantClusterSpec `json:"spec"`
	// Status is the observed state.
	// +optional
	Status TenantClusterStatus `json:"status,omitempty"`
}

// TenantClusterList is a list of TenantClusters.
//
// +kubebuilder:object:root=true
type TenantClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the TenantClusters.
	Items []TenantCluster `json:"items"`
}
