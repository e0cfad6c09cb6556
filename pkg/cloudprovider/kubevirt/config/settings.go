package config

import (
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"k8c.io/machine-controller/sdk/providerconfig"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Settings is a cloudProviderSpec with every ConfigVar resolved, every default
// applied and every value parsed. It is what the VM builder consumes. Settings
// carry the infra kubeconfig: never log or print them.
type Settings struct {
	ClusterName string
	ProjectID   string
	// Kubeconfig is the decoded infra kubeconfig (YAML or JSON).
	Kubeconfig []byte `json:"-"`
	// Namespace is the explicit infra namespace from the spec, or "".
	Namespace string

	OperatingSystem providerconfig.OperatingSystem

	// Flavor names a VirtualMachineInstancePreset, or "".
	Flavor       string
	Instancetype *kubevirtcorev1.InstancetypeMatcher
	Preference   *kubevirtcorev1.PreferenceMatcher

	// CPUs is the CPU request and limit; nil with an instancetype or VCPUCores.
	CPUs *resource.Quantity
	// VCPUCores is virtualMachine.template.vcpus.cores, 0 when unset.
	VCPUCores int
	// Memory is the memory request and limit; nil with an instancetype.
	Memory *resource.Quantity

	PrimaryDisk    PrimaryDiskSettings
	SecondaryDisks []SecondaryDiskSettings
	// GPUs and HostDevices are passed through as they are.
	GPUs        []DeviceSettings
	HostDevices []DeviceSettings

	DNSPolicy corev1.DNSPolicy
	DNSConfig *corev1.PodDNSConfig

	// Region and Zone are explicit location overrides, or "".
	Region string
	Zone   string
	// Zones spreads the VMs of a MachineDeployment, in order.
	Zones []string

	// OVNSubnet is providerNetwork.vpc.subnet.name, or "".
	OVNSubnet string

	NetworkMultiQueue bool
	EvictionStrategy  kubevirtcorev1.EvictionStrategy
	Networks          []NetworkRef

	// EvacuationPolicy is "" unless the spec sets one.
	EvacuationPolicy EvacuationPolicy

	Affinity                  AffinitySettings
	TopologySpreadConstraints []TopologySpread
	// NodeSelector and Tolerations go to the VMI template as they are.
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration

	Tuning TuningSettings

	// SSHService is nil unless each VM's SSH port is exposed.
	SSHService *SSHServiceSettings

	// Warnings describe input that was accepted but converted or ignored,
	// including the warnings of Parse.
	Warnings []string
}

// StorageTarget selects where a DataVolumeTemplate puts its storage request.
type StorageTarget string

const (
	// StorageTargetStorage uses DataVolumeSpec.storage (the default), which
	// lets CDI's StorageProfile complete what is missing.
	StorageTargetStorage StorageTarget = "storage"
	// StorageTargetPVC uses DataVolumeSpec.pvc.
	StorageTargetPVC StorageTarget = "pvc"
)

// ImageSourceKind is where the OS image comes from.
type ImageSourceKind string

const (
	// ImageSourceHTTP imports from an HTTP(S) URL.
	ImageSourceHTTP ImageSourceKind = "http"
	// ImageSourceRegistry imports from a container registry.
	ImageSourceRegistry ImageSourceKind = "registry"
	// ImageSourcePVC clones an existing PVC / DataVolume.
	ImageSourcePVC ImageSourceKind = "pvc"
)

// ImageSource is a resolved primary-disk source.
type ImageSource struct {
	Kind ImageSourceKind
	// URL for http and registry sources.
	URL string
	// PullMethod for registry sources: "node" or "pod".
	PullMethod string
	// PVCNamespace and PVCName for pvc sources; PVCNamespace "" means the
	// VM's namespace.
	PVCNamespace string
	PVCName      string
	// ExtraHeaders for http sources, as "Name: value".
	ExtraHeaders []string
	// ExtraHeadersSecretRef names an infra Secret whose data become headers.
	ExtraHeadersSecretRef string
	// SecretRef names an infra Secret with basic-auth credentials for CDI.
	SecretRef string
}

// DiskSettings is what every disk has.
type DiskSettings struct {
	Size             resource.Quantity
	StorageClassName string
	// AccessMode is "" when it must be looked up in the StorageProfile.
	AccessMode corev1.PersistentVolumeAccessMode
	Tuning     DiskTuningSettings
}

// PrimaryDiskSettings is the resolved OS disk.
type PrimaryDiskSettings struct {
	DiskSettings
	StorageTarget StorageTarget
	Source        ImageSource
	// PreAllocated reports that an http image is imported once per (URL,
	// storage class) into a cache DataVolume of the namespace and cloned
	// for each VM. It is true for http sources unless
	// disablePreAllocatedDataVolumes is set, and false for other sources.
	PreAllocated bool
}

// SecondaryDiskSettings is a resolved blank data disk.
type SecondaryDiskSettings struct {
	DiskSettings
	// Name is unique among the disks, "secondarydisk<i>" by default.
	Name string
}

// DiskTuningSettings is the per-disk tuning, zero when untuned.
type DiskTuningSettings struct {
	Bus               kubevirtcorev1.DiskBus
	Cache             kubevirtcorev1.DriverCache
	DedicatedIOThread *bool
}

// NetworkRef is a resolved Multus network reference.
type NetworkRef struct {
	// Namespace "" means the VM's namespace.
	Namespace string
	Name      string
	Default   bool
	// Binding is BindingBridge or BindingSRIOV.
	Binding string
}

// Interface bindings of networks.
const (
	BindingBridge = "bridge"
	BindingSRIOV  = "sriov"
)

// DeviceSettings is a resolved passthrough device.
type DeviceSettings struct {
	Name       string
	DeviceName string
}

// AffinityType is a preset strength.
type AffinityType string

const (
	// AffinityNone disables a preset.
	AffinityNone AffinityType = ""
	// AffinitySoft maps to preferredDuringSchedulingIgnoredDuringExecution.
	AffinitySoft AffinityType = "soft"
	// AffinityHard maps to requiredDuringSchedulingIgnoredDuringExecution.
	AffinityHard AffinityType = "hard"
)

// AffinitySettings are the resolved scheduling presets.
type AffinitySettings struct {
	PodAffinity      AffinityType
	PodAntiAffinity  AffinityType
	NodeAffinity     NodePreset
	NodeAntiAffinity NodePreset
}

// NodePreset selects infra nodes by one label key and optional values.
type NodePreset struct {
	Type   AffinityType
	Key    string
	Values []string
}

// TopologySpread is a resolved topology spread constraint.
type TopologySpread struct {
	MaxSkew           int32
	TopologyKey       string
	WhenUnsatisfiable corev1.UnsatisfiableConstraintAction
}

// TuningSettings is the resolved WorkerConfig tuning.
type TuningSettings struct {
	CPU                     *CPUTuning
	HugepagesPageSize       string
	GuestMemory             *resource.Quantity
	OvercommitGuestOverhead bool
	RNG                     bool
	BlockMultiQueue         *bool
	// IOThreadsPolicy is "" when unset.
	IOThreadsPolicy kubevirtcorev1.IOThreadsPolicy
}

// SSHServiceSettings is the resolved virtualMachine.sshService.
type SSHServiceSettings struct {
	// Type is corev1.ServiceTypeNodePort or corev1.ServiceTypeLoadBalancer.
	Type       corev1.ServiceType
	Port       int32
	TargetPort int32
	// ExternalTrafficPolicy is Cluster (the default) or Local.
	ExternalTrafficPolicy corev1.ServiceExternalTrafficPolicy
	// LoadBalancerSourceRanges are CIDRs, only for LoadBalancer.
	LoadBalancerSourceRanges []string
	Annotations              map[string]string
}
