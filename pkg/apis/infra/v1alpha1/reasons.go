package v1alpha1

// Condition types of a TenantCluster.
const (
	// ConditionReady summarizes the other conditions of a TenantCluster:
	// true when all of them are; otherwise false with the reason and
	// message of the first that is not.
	ConditionReady = "Ready"
	// ConditionNamespaceReady is true when namespace cluster-<id> exists
	// and belongs to the TenantCluster.
	ConditionNamespaceReady = "NamespaceReady"
	// ConditionKubeconfigReady is true when the tenant kubeconfig in the
	// tenant namespace parses and the tenant API server answers with it.
	ConditionKubeconfigReady = "KubeconfigReady"
	// ConditionConfigReady is true when the images, networks and custom
	// NetworkPolicies of the spec are valid and written to the tenant
	// namespace's ConfigMaps.
	ConditionConfigReady = "ConfigReady"
	// ConditionVLANReady is true when the tenant cluster holds a VLAN id
	// of the controller's range and its NetworkAttachmentDefinition is
	// written to the tenant namespace. Only set when the controller runs
	// with a VLAN template.
	ConditionVLANReady = "VLANReady"
	// ConditionDeleting reports the progress of a deletion: VMs first,
	// then what the controller made in the tenant cluster, then the
	// namespace.
	ConditionDeleting = "Deleting"
)

// Reasons of the conditions of a TenantCluster.
const (
	// ReasonReady: every condition is true.
	ReasonReady = "Ready"
	// ReasonFailed: a step failed; the message names it.
	ReasonFailed = "Failed"
	// ReasonCreated: the namespace exists and belongs to the TenantCluster.
	ReasonCreated = "Created"

	// ReasonTenantReachable: the kubeconfig in the namespace parses and
	// the tenant cluster's API server answered with it.
	ReasonTenantReachable = "TenantReachable"
	// ReasonKubeconfigMissing: the spec names no kubeconfig Secret and
	// none was put into the namespace by hand.
	ReasonKubeconfigMissing = "KubeconfigMissing"
	// ReasonKubeconfigSecretMissing: the referenced Secret, or its key,
	// does not exist.
	ReasonKubeconfigSecretMissing = "KubeconfigSecretMissing"
	// ReasonKubeconfigInvalid: the kubeconfig does not parse.
	ReasonKubeconfigInvalid = "KubeconfigInvalid"
	// ReasonTenantUnreachable: the kubeconfig parses, but the tenant
	// cluster's API server did not answer with it.
	ReasonTenantUnreachable = "TenantUnreachable"
	// ReasonTenantUnauthorized: the tenant cluster's API server answers,
	// but does not accept the kubeconfig's credentials (401).
	ReasonTenantUnauthorized = "TenantUnauthorized"
	// ReasonTenantForbidden: the tenant cluster's API server accepts the
	// kubeconfig's credentials, but forbids its user to read /version (403).
	ReasonTenantForbidden = "TenantForbidden"

	// ReasonWritten: the spec's images, networks and policies are valid
	// and written to the namespace's ConfigMaps.
	ReasonWritten = "Written"
	// ReasonInvalidConfig: an entry of the spec is refused; nothing of
	// that field is written.
	ReasonInvalidConfig = "InvalidConfig"
	// ReasonObjectInTheWay (Warning): an object has the name of one the
	// infra-controller keeps but is not the infra-controller's, so it was
	// left alone; the event regards it, or, for one in the tenant cluster,
	// the tenant namespace.
	ReasonObjectInTheWay = "ObjectInTheWay"
	// ReasonFeatureOff: the spec sets a field no controller of this
	// infra-controller reads.
	ReasonFeatureOff = "FeatureOff"

	// ReasonVLANAllocated: a VLAN id is claimed and the tenant cluster's
	// NetworkAttachmentDefinition on it is written.
	ReasonVLANAllocated = "VLANAllocated"
	// ReasonVLANRangeExhausted: every VLAN id of the controller's range is
	// claimed by another tenant cluster, or still used by the VMs of a
	// deleted one; the tenant cluster gets one when an id is released.
	ReasonVLANRangeExhausted = "VLANRangeExhausted"
	// ReasonVLANNamespacePending: a VLAN id is claimed, but the tenant
	// namespace does not exist yet, belongs to another TenantCluster or is
	// being deleted, so its NetworkAttachmentDefinition is not written.
	ReasonVLANNamespacePending = "VLANNamespacePending"
	// ReasonVLANNetworkInTheWay: a NetworkAttachmentDefinition of the
	// VLAN network's name that the controller did not make is in the
	// tenant namespace; it is left alone.
	ReasonVLANNetworkInTheWay = "VLANNetworkInTheWay"

	// Reasons of ConditionDeleting, one per deletion step.
	ReasonStopping                = "Stopping"
	ReasonDeletingVirtualMachines = "DeletingVirtualMachines"
	ReasonCleaningTenantCluster   = "CleaningTenantCluster"
	ReasonDeletingNamespace       = "DeletingNamespace"
	ReasonDeleted                 = "Deleted"
	ReasonReleased                = "Released"
	// ReasonTenantCleanupAbandoned: the tenant cluster could not be
	// cleaned within the cleanup timeout; its objects are left there.
	ReasonTenantCleanupAbandoned = "TenantCleanupAbandoned"
)
