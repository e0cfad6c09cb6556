package vm

import (
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Input is everything Build needs.
type Input struct {
	Settings *config.Settings
	Machine  MachineInfo
	Facts    Facts
	// UserData is the cloud-init (or Ignition) document of the Machine.
	UserData string
}

// MachineInfo is the part of a Machine that shapes its VM.
type MachineInfo struct {
	// Name of the Machine; the VM gets the same name.
	Name string
	UID  types.UID
	// MachineDeployment owning the Machine through its MachineSet, or "".
	MachineDeployment string
	Labels            map[string]string
	Annotations       map[string]string
}

// Facts are what the provider looked up on the infra cluster.
type Facts struct {
	// Namespace is the infra namespace of the VM.
	Namespace string
	// InstancetypeKind and PreferenceKind are the kinds found for the
	// requested instancetype and preference ("" when not requested).
	InstancetypeKind string
	PreferenceKind   string
	// AccessModes maps a storage class to the access mode its CDI
	// StorageProfile advertises; used for disks without storageAccessType.
	AccessModes map[string]corev1.PersistentVolumeAccessMode
	// Region and Zone derived from the primary storage class's
	// allowedTopologies ("" when none or ambiguous).
	Region string
	Zone   string
	// SpreadZone is the zone from Settings.Zones that this Machine's VM
	// goes to ("" when Settings.Zones is empty).
	SpreadZone string
	// ExtraHeaders resolved from primaryDisk.extraHeadersSecretRef, sorted.
	ExtraHeaders []string
	// CacheDataVolume names the cache DataVolume in Namespace that holds
	// the primary disk's http image; the root disk then clones it instead
	// of importing the image. "" imports directly, and so does a primary
	// disk that is not PreAllocated.
	CacheDataVolume string
	// SourcePVC is the PVC in Namespace a primary disk with source pvc
	// clones when it is not the one osImage names: the infra-controller's
	// named image image-<name> for a bare <name>. "" clones osImage's PVC.
	SourcePVC string
}
