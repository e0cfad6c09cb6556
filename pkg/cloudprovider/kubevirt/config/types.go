package config

import (
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"k8c.io/machine-controller/sdk/providerconfig"

	corev1 "k8s.io/api/core/v1"
)

// RawConfig is the wire form of providerSpec.value.cloudProviderSpec. Every
// field of the SDK's kubevirt.RawConfig keeps its JSON name and meaning; the
// fields marked "Additive" are extensions of this project.
type RawConfig struct {
	ClusterName               providerconfig.ConfigVarString `json:"clusterName"`
	ProjectID                 providerconfig.ConfigVarString `json:"projectID,omitempty"`
	Auth                      Auth                           `json:"auth,omitempty"`
	VirtualMachine            VirtualMachine                 `json:"virtualMachine,omitempty"`
	Affinity                  Affinity                       `json:"affinity,omitempty"`
	TopologySpreadConstraints []TopologySpreadConstraint     `json:"topologySpreadConstraints"`
}

// Auth holds the infra cluster credentials.
type Auth struct {
	// Kubeconfig of the infra cluster. Inline values must be base64 encoded;
	// values from a Secret, ConfigMap or the KUBEVIRT_KUBECONFIG environment
	// variable may be base64 or plain YAML/JSON.
	Kubeconfig providerconfig.ConfigVarString `json:"kubeconfig,omitempty"`
	// Namespace on the infra cluster for the VMs. Additive; the KKP <= 2.20
	// flat field "namespace" converts to it. When empty the provider's own
	// setting, then the kubeconfig's current-context namespace, then "default"
	// apply.
	Namespace providerconfig.ConfigVarString `json:"namespace,omitempty"`
}

// VirtualMachine describes the VM of each Machine.
type VirtualMachine struct {
	// Flavor selects a VirtualMachineInstancePreset in the infra namespace.
	Flavor Flavor `json:"flavor,omitempty"`
	// Instancetype is optional; its kind is honoured when given.
	Instancetype *kubevirtcorev1.InstancetypeMatcher `json:"instancetype,omitempty"`
	// Preference is optional; its kind is honoured when given.
	Preference              *kubevirtcorev1.PreferenceMatcher `json:"preference,omitempty"`
	Template                Template                          `json:"template,omitempty"`
	DNSPolicy               providerconfig.ConfigVarString    `json:"dnsPolicy,omitempty"`
	DNSConfig               *corev1.PodDNSConfig              `json:"dnsConfig,omitempty"`
	Location                *Location                         `json:"location,omitempty"`
	ProviderNetwork         *ProviderNetwork                  `json:"providerNetwork,omitempty"`
	EnableNetworkMultiQueue providerconfig.ConfigVarBool      `json:"enableNetworkMultiQueue,omitempty"`
	EvictionStrategy        string                            `json:"evictionStrategy,omitempty"`
	// EvacuationPolicy is restart, liveMigrate or replace; unset, the
	// VMI's disks choose. Additive.
	EvacuationPolicy string `json:"evacuationPolicy,omitempty"`

	// Networks lists Multus networks by NetworkAttachmentDefinition
	// reference. Additive.
	Networks []Network `json:"networks,omitempty"`
	// Tuning carries the performance settings of Gardener's WorkerConfig.
	// Additive.
	Tuning *Tuning `json:"tuning,omitempty"`
	// NodeSelector restricts the VM to infra nodes with these labels.
	// Additive.
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Tolerations let the VM run on tainted (dedicated) infra nodes.
	// Additive.
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// SSHService exposes the SSH port of each VM through a Service of its
	// own in the infra namespace. Additive.
	SSHService *SSHService `json:"sshService,omitempty"`
}

// SSHService asks for one Service per VM that forwards a port to the
// guest's SSH daemon. Additive.
type SSHService struct {
	// Type is the Service type: NodePort or LoadBalancer.
	Type string `json:"type"`
	// Port is the Service port, 22 by default.
	Port int32 `json:"port,omitempty"`
	// TargetPort is the port sshd listens on in the guest, 22 by default.
	TargetPort int32 `json:"targetPort,omitempty"`
	// ExternalTrafficPolicy is Cluster (the default, as in Kubernetes) or
	// Local, which keeps the client address visible to NetworkPolicies and
	// sshd.
	ExternalTrafficPolicy string `json:"externalTrafficPolicy,omitempty"`
	// LoadBalancerSourceRanges restricts the clients of a LoadBalancer
	// Service to these CIDRs; only with type LoadBalancer.
	LoadBalancerSourceRanges []string `json:"loadBalancerSourceRanges,omitempty"`
	// Annotations go on the Service, e.g. to choose a load balancer's
	// address pool.
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Flavor references a VirtualMachineInstancePreset.
type Flavor struct {
	Name providerconfig.ConfigVarString `json:"name,omitempty"`
	// Profile is accepted for compatibility and ignored, as upstream does.
	Profile providerconfig.ConfigVarString `json:"profile,omitempty"`
}

// Template describes compute and disks.
type Template struct {
	VCPUs          VCPUs                          `json:"vcpus,omitempty"`
	CPUs           providerconfig.ConfigVarString `json:"cpus,omitempty"`
	Memory         providerconfig.ConfigVarString `json:"memory,omitempty"`
	PrimaryDisk    PrimaryDisk                    `json:"primaryDisk,omitempty"`
	SecondaryDisks []SecondaryDisk                `json:"secondaryDisks,omitempty"`
	// GPUs passes host GPUs through to the VM. Additive.
	GPUs []Device `json:"gpus,omitempty"`
	// HostDevices passes other host PCI or mediated devices (such as NVMe
	// drives) through to the VM. Additive.
	HostDevices []Device `json:"hostDevices,omitempty"`
}

// Device is a host device passed through to the VM: its name in the VM
// and the resource name the infra cluster's device plugin advertises it
// under (permitted in the KubeVirt CR's permittedHostDevices).
type Device struct {
	Name       string `json:"name"`
	DeviceName string `json:"deviceName"`
}

// VCPUs sets guest cores without CPU requests/limits, so KubeVirt's
// cpuAllocationRatio decides the launcher pod's CPU request.
type VCPUs struct {
	Cores int `json:"cores,omitempty"`
}

// Disk is what every disk has.
type Disk struct {
	Size              providerconfig.ConfigVarString `json:"size,omitempty"`
	StorageClassName  providerconfig.ConfigVarString `json:"storageClassName,omitempty"`
	StorageAccessType providerconfig.ConfigVarString `json:"storageAccessType,omitempty"`
}

// PrimaryDisk is the OS disk.
type PrimaryDisk struct {
	Disk
	DataVolumeSecretRef   providerconfig.ConfigVarString `json:"dataVolumeSecretRef,omitempty"`
	ExtraHeaders          []string                       `json:"extraHeaders,omitempty"`
	ExtraHeadersSecretRef providerconfig.ConfigVarString `json:"extraHeadersSecretRef,omitempty"`
	StorageTarget         providerconfig.ConfigVarString `json:"storageTarget,omitempty"`
	OsImage               providerconfig.ConfigVarString `json:"osImage,omitempty"`
	Source                providerconfig.ConfigVarString `json:"source,omitempty"`
	PullMethod            providerconfig.ConfigVarString `json:"pullMethod,omitempty"`
	// DisablePreAllocatedDataVolumes makes every VM import an http image
	// itself instead of cloning the namespace's cache DataVolume of it.
	// Additive; Gardener's KubeVirt WorkerConfig names its field so.
	DisablePreAllocatedDataVolumes providerconfig.ConfigVarBool `json:"disablePreAllocatedDataVolumes,omitempty"`
}

// SecondaryDisk is a blank data disk.
type SecondaryDisk struct {
	Disk
	// Name of the disk, used for its DataVolume suffix and to match
	// tuning.devices.disks[].name. Additive; defaults to "secondarydisk<i>".
	Name string `json:"name,omitempty"`
}

// Affinity holds the scheduling presets.
type Affinity struct {
	// PodAffinityPreset co-locates the VMs of a MachineDeployment: "", soft, hard.
	PodAffinityPreset providerconfig.ConfigVarString `json:"podAffinityPreset,omitempty"`
	// PodAntiAffinityPreset spreads them over infra nodes: "", soft, hard.
	PodAntiAffinityPreset providerconfig.ConfigVarString `json:"podAntiAffinityPreset,omitempty"`
	NodeAffinityPreset    NodeAffinityPreset             `json:"nodeAffinityPreset,omitempty"`
	// NodeAntiAffinityPreset keeps VMs away from matching infra nodes. Additive.
	NodeAntiAffinityPreset NodeAffinityPreset `json:"nodeAntiAffinityPreset,omitempty"`
}

// NodeAffinityPreset selects infra nodes by one label.
type NodeAffinityPreset struct {
	Type   providerconfig.ConfigVarString   `json:"type,omitempty"`
	Key    providerconfig.ConfigVarString   `json:"key,omitempty"`
	Values []providerconfig.ConfigVarString `json:"values,omitempty"`
}

// TopologySpreadConstraint spreads the VMs of a MachineDeployment.
type TopologySpreadConstraint struct {
	MaxSkew           providerconfig.ConfigVarString `json:"maxSkew,omitempty"`
	TopologyKey       providerconfig.ConfigVarString `json:"topologyKey,omitempty"`
	WhenUnsatisfiable providerconfig.ConfigVarString `json:"whenUnsatisfiable,omitempty"`
}

// Location pins VMs to a region and zone of the infra cluster.
type Location struct {
	Region string `json:"region,omitempty"`
	Zone   string `json:"zone,omitempty"`
	// Zones spreads the VMs of a MachineDeployment over these zones, in
	// order. Additive; mutually exclusive with Zone.
	Zones []string `json:"zones,omitempty"`
}

// ProviderNetwork describes a Kube-OVN fabric.
type ProviderNetwork struct {
	Name string `json:"name"`
	VPC  VPC    `json:"vpc"`
}

// VPC is a Kube-OVN VPC.
type VPC struct {
	Name   string  `json:"name"`
	Subnet *Subnet `json:"subnet,omitempty"`
}

// Subnet is a Kube-OVN logical switch.
type Subnet struct {
	Name string `json:"name"`
}

// Network attaches a Multus network. Additive.
type Network struct {
	// Name of the NetworkAttachmentDefinition, "namespace/name" or "name"
	// (then the VM's namespace).
	Name string `json:"name"`
	// Default makes this network replace the pod network. At most one network
	// may be the default.
	Default bool `json:"default,omitempty"`
	// Binding attaches the VM to the network: "bridge" (default) or
	// "sriov" (an SR-IOV virtual function, for high-performance
	// networking). Additive.
	Binding string `json:"binding,omitempty"`
}

// Tuning mirrors the performance settings of Gardener's KubeVirt WorkerConfig.
// Additive.
type Tuning struct {
	CPU    *CPUTuning    `json:"cpu,omitempty"`
	Memory *MemoryTuning `json:"memory,omitempty"`
	// OvercommitGuestOverhead keeps the guest-management overhead out of the
	// scheduler's memory request.
	OvercommitGuestOverhead bool           `json:"overcommitGuestOverhead,omitempty"`
	Devices                 *DevicesTuning `json:"devices,omitempty"`
	// IOThreadsPolicy moves disk I/O off the main QEMU thread: "shared"
	// (one I/O thread for all disks not dedicated) or "auto" (a pool
	// sized by the vCPUs).
	IOThreadsPolicy string `json:"ioThreadsPolicy,omitempty"`
}

// CPUTuning is the guest CPU topology and placement.
type CPUTuning struct {
	Cores                 uint32   `json:"cores,omitempty"`
	Sockets               uint32   `json:"sockets,omitempty"`
	Threads               uint32   `json:"threads,omitempty"`
	Model                 string   `json:"model,omitempty"`
	Features              []string `json:"features,omitempty"`
	DedicatedCPUPlacement bool     `json:"dedicatedCpuPlacement,omitempty"`
	IsolateEmulatorThread bool     `json:"isolateEmulatorThread,omitempty"`
}

// MemoryTuning sets hugepages and the guest-visible memory.
type MemoryTuning struct {
	Hugepages *Hugepages `json:"hugepages,omitempty"`
	// Guest is the memory visible inside the guest; it must lie between the
	// requested memory and its limit.
	Guest string `json:"guest,omitempty"`
}

// Hugepages backs guest memory with huge pages.
type Hugepages struct {
	PageSize string `json:"pageSize"`
}

// DevicesTuning tunes disks and queues.
type DevicesTuning struct {
	// Disks tunes disks by name: "root-disk" for the primary disk, a
	// secondary disk's name otherwise.
	Disks []DiskTuning `json:"disks,omitempty"`
	// RNG, when present, gives the guest a random number generator.
	RNG *struct{} `json:"rng,omitempty"`
	// BlockMultiQueue enables virtio-blk multi-queue.
	BlockMultiQueue *bool `json:"blockMultiQueue,omitempty"`
	// NetworkInterfaceMultiQueue is the WorkerConfig spelling of
	// virtualMachine.enableNetworkMultiQueue; the two must agree when both are set.
	NetworkInterfaceMultiQueue *bool `json:"networkInterfaceMultiQueue,omitempty"`
}

// DiskTuning tunes one disk.
type DiskTuning struct {
	Name              string   `json:"name"`
	Disk              *DiskBus `json:"disk,omitempty"`
	Cache             string   `json:"cache,omitempty"`
	DedicatedIOThread *bool    `json:"dedicatedIOThread,omitempty"`
}

// DiskBus is the emulated bus of a disk.
type DiskBus struct {
	Bus string `json:"bus,omitempty"`
}

// RootDiskName is the name under which tuning.devices.disks addresses the
// primary disk.
const RootDiskName = "root-disk"

// PrimaryDiskVolumeName is the name of the primary disk's disk and volume in
// the VirtualMachine (what instancetype.inferFromVolume names).
const PrimaryDiskVolumeName = "datavolumedisk"
