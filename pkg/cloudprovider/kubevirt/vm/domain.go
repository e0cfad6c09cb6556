package vm

import (
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// cpuFeaturePolicyRequire makes guest creation fail unless the host CPU or
// the hypervisor provides the feature.
const cpuFeaturePolicyRequire = "require"

// instancetypeMatcher returns a copy of the requested matcher with the kind
// the provider found when the user gave none, or nil.
func instancetypeMatcher(m *kubevirtcorev1.InstancetypeMatcher, foundKind string) *kubevirtcorev1.InstancetypeMatcher {
	if m == nil {
		return nil
	}
	out := m.DeepCopy()
	if out.Kind == "" {
		out.Kind = foundKind
	}
	return out
}

// preferenceMatcher returns a copy of the requested matcher with the kind
// the provider found when the user gave none, or nil.
func preferenceMatcher(m *kubevirtcorev1.PreferenceMatcher, foundKind string) *kubevirtcorev1.PreferenceMatcher {
	if m == nil {
		return nil
	}
	out := m.DeepCopy()
	if out.Kind == "" {
		out.Kind = foundKind
	}
	return out
}

// buildDomain returns the domain of the VM template without disks and
// interfaces.
func buildDomain(s *config.Settings) kubevirtcorev1.DomainSpec {
	out := kubevirtcorev1.DomainSpec{
		Resources: resources(s),
		CPU:       cpu(s),
		Memory:    memory(s.Tuning),
		Devices:   devices(s),
	}
	if s.Tuning.IOThreadsPolicy != "" {
		out.IOThreadsPolicy = ptr.To(s.Tuning.IOThreadsPolicy)
	}
	return out
}

// resources returns the compute requests and limits. An instancetype brings
// its own, so then only the overhead setting remains.
func resources(s *config.Settings) kubevirtcorev1.ResourceRequirements {
	out := kubevirtcorev1.ResourceRequirements{
		OvercommitGuestOverhead: s.Tuning.OvercommitGuestOverhead,
	}
	if s.Instancetype != nil {
		return out
	}

	list := corev1.ResourceList{}
	if s.Memory != nil {
		list[corev1.ResourceMemory] = s.Memory.DeepCopy()
	}
	if s.CPUs != nil {
		list[corev1.ResourceCPU] = s.CPUs.DeepCopy()
	}
	if len(list) > 0 {
		out.Requests = list
		out.Limits = list.DeepCopy()
	}
	return out
}

// cpu returns the guest CPU: the vCPU cores (ignored with an instancetype,
// which sizes the guest itself) merged with the CPU tuning, or nil. Config
// validation guarantees that both agree on the cores.
func cpu(s *config.Settings) *kubevirtcorev1.CPU {
	useCores := s.Instancetype == nil && s.VCPUCores > 0
	if !useCores && s.Tuning.CPU == nil {
		return nil
	}
	out := &kubevirtcorev1.CPU{}
	if useCores {
		out.Cores = uint32(s.VCPUCores) // Config validation bounds the cores.
	}
	if t := s.Tuning.CPU; t != nil {
		if t.Cores != 0 {
			out.Cores = t.Cores
		}
		out.Sockets = t.Sockets
		out.Threads = t.Threads
		out.Model = t.Model
		out.DedicatedCPUPlacement = t.DedicatedCPUPlacement
		out.IsolateEmulatorThread = t.IsolateEmulatorThread
		for _, name := range t.Features {
			out.Features = append(out.Features, kubevirtcorev1.CPUFeature{Name: name, Policy: cpuFeaturePolicyRequire})
		}
	}
	return out
}

// memory returns the guest memory tuning, or nil.
func memory(t config.TuningSettings) *kubevirtcorev1.Memory {
	if t.HugepagesPageSize == "" && t.GuestMemory == nil {
		return nil
	}
	out := &kubevirtcorev1.Memory{}
	if t.HugepagesPageSize != "" {
		out.Hugepages = &kubevirtcorev1.Hugepages{PageSize: t.HugepagesPageSize}
	}
	if t.GuestMemory != nil {
		out.Guest = ptr.To(t.GuestMemory.DeepCopy())
	}
	return out
}

// devices returns the devices of the VM template without disks and
// interfaces. Network multi-queue is always explicit.
func devices(s *config.Settings) kubevirtcorev1.Devices {
	out := kubevirtcorev1.Devices{
		NetworkInterfaceMultiQueue: ptr.To(s.NetworkMultiQueue),
	}
	if s.Tuning.RNG {
		out.Rng = &kubevirtcorev1.Rng{}
	}
	if s.Tuning.BlockMultiQueue != nil {
		out.BlockMultiQueue = ptr.To(*s.Tuning.BlockMultiQueue)
	}
	for _, d := range s.GPUs {
		out.GPUs = append(out.GPUs, kubevirtcorev1.GPU{Name: d.Name, DeviceName: d.DeviceName})
	}
	for _, d := range s.HostDevices {
		out.HostDevices = append(out.HostDevices, kubevirtcorev1.HostDevice{Name: d.Name, DeviceName: d.DeviceName})
	}
	return out
}
