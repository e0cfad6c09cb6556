package v1alpha1

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
)

// Image is a named image of a tenant cluster: imported once into the
// tenant namespace as DataVolume image-<name>, which primary disks clone
// by naming it.
type Image struct {
	// Name identifies the image; the DataVolume is image-<name>.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=57
	Name string `json:"name"`
	// URL is the HTTP(S) address of the image.
	// +kubebuilder:validation:Pattern=`^https?://.+`
	URL string `json:"url"`
	// StorageClassName is the infra storage class of the DataVolume; the
	// infra default class when empty.
	// +optional
	StorageClassName string `json:"storageClassName,omitempty"`
	// Size is the requested size of the DataVolume.
	Size resource.Quantity `json:"size"`
}

// Network is a network of a tenant cluster: a NetworkAttachmentDefinition
// of that name in the tenant namespace, deleted with the tenant cluster.
type Network struct {
	// Name is the name of the NetworkAttachmentDefinition.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Config is the CNI configuration, an object with type or plugins.
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Config runtime.RawExtension `json:"config"`
}

// NetworkPolicy is a custom NetworkPolicy of the tenant namespace, kept
// beside the default policies.
type NetworkPolicy struct {
	// Name is the name of the NetworkPolicy.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Spec is the policy; an empty pod selector selects every pod of the
	// namespace.
	Spec networkingv1.NetworkPolicySpec `json:"spec"`
}
