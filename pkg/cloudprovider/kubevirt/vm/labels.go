package vm

import (
	"maps"
	"strings"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"

	"k8c.io/machine-controller/sdk/providerconfig"
)

// Label keys the builder sets on VirtualMachines, their templates and the
// user data Secret.
const (
	// LabelVM names the VM; KubeVirt uses the same key.
	LabelVM = "kubevirt.io/vm"
	// LabelMachineDeployment groups the VMs of one MachineDeployment (the
	// Machine's own name for a standalone Machine). Affinity presets and
	// topology spread constraints select on it.
	LabelMachineDeployment = "md"
	// LabelClusterName is the tenant cluster name; the KubeVirt cloud
	// controller manager selects load balancer backends by it.
	LabelClusterName = "cluster.x-k8s.io/cluster-name"
	// LabelRole is the node role, always "worker".
	LabelRole = "cluster.x-k8s.io/role"
	// LabelProjectID is the Kubermatic project of the tenant cluster.
	LabelProjectID = "kubermatic.k8c.io/project-id"
	// LabelClusterID is the Kubermatic cluster id, i.e. the cluster name.
	LabelClusterID = "kubermatic.k8c.io/cluster-id"
	// LabelFlavor selects a VirtualMachineInstancePreset; it is set on the
	// VM template only.
	LabelFlavor = "kubevirt.io/flavor"
	// LabelRegion is the well-known topology region label.
	LabelRegion = "topology.kubernetes.io/region"
	// LabelZone is the well-known topology zone label.
	LabelZone = "topology.kubernetes.io/zone"

	// roleWorker is the value of LabelRole.
	roleWorker = "worker"
)

// Annotation keys the builder sets on the VM template.
const (
	// AnnotationPodBridgeLiveMigration allows live migration with a bridge
	// binding on the pod network.
	AnnotationPodBridgeLiveMigration = "kubevirt.io/allow-pod-bridge-network-live-migration"
	// AnnotationOVNLiveMigration allows live migration under Kube-OVN.
	AnnotationOVNLiveMigration = "ovn.kubernetes.io/allow_live_migration"
	// AnnotationOVNLogicalSwitch puts the VM on a Kube-OVN subnet.
	AnnotationOVNLogicalSwitch = "ovn.kubernetes.io/logical_switch"
	// AnnotationIgnitionData carries the Ignition config of Flatcar VMs.
	AnnotationIgnitionData = "kubevirt.io/ignitiondata"
	// AnnotationPlacePCIDevicesOnRootComplex lets Flatcar read its Ignition
	// config on KubeVirt >= 1.6.4.
	AnnotationPlacePCIDevicesOnRootComplex = "kubevirt.io/placePCIDevicesOnRootComplex"

	// cdiAnnotationPrefix marks Machine annotations meant for the root
	// DataVolume instead of the VM template.
	cdiAnnotationPrefix = "cdi.kubevirt.io"
	// machineControllerAnnotationMarker and kubeletAnnotationPrefix mark
	// machine-controller internals that must not reach the VM.
	machineControllerAnnotationMarker = "machine-controller.kubermatic.io"
	kubeletAnnotationPrefix           = "v1.kubelet-"
)

// machineDeploymentLabelValue is the value of LabelMachineDeployment.
func machineDeploymentLabelValue(m MachineInfo) string {
	if m.MachineDeployment != "" {
		return m.MachineDeployment
	}
	return m.Name
}

// vmLabels returns the labels of the VM: topology labels, then the Machine's
// labels, then the system labels. Neither Machine labels nor topology labels
// can override a label set by a later step, and Machine labels cannot
// override topology labels either.
func vmLabels(in Input) map[string]string {
	labels := make(map[string]string, len(in.Machine.Labels)+8)
	maps.Copy(labels, in.Machine.Labels)
	maps.Copy(labels, topologyLabels(in))
	maps.Copy(labels, systemLabels(in))
	return labels
}

// templateLabels returns the labels of the VM template: the VM labels plus
// the flavor label.
func templateLabels(in Input) map[string]string {
	labels := vmLabels(in)
	if in.Settings.Flavor != "" {
		labels[LabelFlavor] = in.Settings.Flavor
	}
	return labels
}

// topologyLabels returns the region and zone labels. Storage-class facts
// come first; explicit settings override them, and a spread zone overrides
// every other zone.
func topologyLabels(in Input) map[string]string {
	region := firstNonEmpty(in.Settings.Region, in.Facts.Region)
	zone := firstNonEmpty(in.Facts.SpreadZone, in.Settings.Zone, in.Facts.Zone)

	labels := map[string]string{}
	if region != "" {
		labels[LabelRegion] = region
	}
	if zone != "" {
		labels[LabelZone] = zone
	}
	return labels
}

// systemLabels returns the labels that identify the VM to the provider and
// to the KubeVirt cloud controller manager.
func systemLabels(in Input) map[string]string {
	return map[string]string{
		LabelVM:                in.Machine.Name,
		LabelMachineDeployment: machineDeploymentLabelValue(in.Machine),
		LabelClusterName:       in.Settings.ClusterName,
		LabelRole:              roleWorker,
		LabelProjectID:         in.Settings.ProjectID,
		LabelClusterID:         in.Settings.ClusterName,
	}
}

// secretLabels returns the labels of the user data Secret.
func secretLabels(in Input) map[string]string {
	return map[string]string{
		LabelVM:                in.Machine.Name,
		LabelMachineDeployment: machineDeploymentLabelValue(in.Machine),
		LabelClusterName:       in.Settings.ClusterName,
	}
}

// templateAnnotations returns the annotations of the VM template: the
// Machine's annotations that are neither CDI annotations nor
// machine-controller internals, overridden by the annotations the builder
// needs.
func templateAnnotations(in Input) map[string]string {
	s := in.Settings
	annotations := map[string]string{}
	for key, value := range in.Machine.Annotations {
		if isTemplateAnnotation(key) {
			annotations[key] = value
		}
	}

	annotations[AnnotationPodBridgeLiveMigration] = "true"
	annotations[AnnotationOVNLiveMigration] = "true"
	if s.OVNSubnet != "" {
		annotations[AnnotationOVNLogicalSwitch] = s.OVNSubnet
	}
	if s.EvacuationPolicy != "" {
		annotations[config.AnnotationEvacuationPolicy] = string(s.EvacuationPolicy)
	}
	if s.OperatingSystem == providerconfig.OperatingSystemFlatcar {
		annotations[AnnotationIgnitionData] = in.UserData
		annotations[AnnotationPlacePCIDevicesOnRootComplex] = "true"
	}
	return annotations
}

// isTemplateAnnotation tells whether a Machine annotation belongs on the VM
// template.
func isTemplateAnnotation(key string) bool {
	return key != AnnotationVMPatch && !isCDIAnnotation(key) &&
		!strings.Contains(key, machineControllerAnnotationMarker) &&
		!strings.HasPrefix(key, kubeletAnnotationPrefix)
}

// isCDIAnnotation tells whether a Machine annotation belongs on the root
// DataVolume.
func isCDIAnnotation(key string) bool {
	return strings.HasPrefix(key, cdiAnnotationPrefix)
}

// cdiAnnotations returns the Machine's CDI annotations, or nil.
func cdiAnnotations(annotations map[string]string) map[string]string {
	var out map[string]string
	for key, value := range annotations {
		if !isCDIAnnotation(key) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[key] = value
	}
	return out
}

// firstNonEmpty returns the first non-empty value, or "".
func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
