package config

import (
	"strings"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Kinds a matcher may name; "" means the provider looks the kind up.
var (
	instancetypeKinds = []string{"VirtualMachineInstancetype", "VirtualMachineClusterInstancetype"}
	preferenceKinds   = []string{"VirtualMachinePreference", "VirtualMachineClusterPreference"}
)

// virtualMachine resolves virtualMachine.*, section by section.
func (rs *resolution) virtualMachine(s *Settings, vm *VirtualMachine) {
	p := specPath.Child("virtualMachine")
	rs.flavor(s, p.Child("flavor"), vm.Flavor)
	if vm.Instancetype != nil {
		rs.matcher(p.Child("instancetype"), vm.Instancetype.Name, vm.Instancetype.Kind, instancetypeKinds)
		s.Instancetype = vm.Instancetype.DeepCopy()
	}
	if vm.Preference != nil {
		rs.matcher(p.Child("preference"), vm.Preference.Name, vm.Preference.Kind, preferenceKinds)
		s.Preference = vm.Preference.DeepCopy()
	}
	rs.resources(s, p.Child("template"), &vm.Template, vm.Instancetype != nil, s.Flavor != "")
	rs.disks(s, p.Child("template"), &vm.Template)
	rs.devices(s, p.Child("template"), &vm.Template)
	rs.dns(s, p, vm)
	rs.location(s, p.Child("location"), vm.Location)
	rs.placement(s, p, vm)
	if vm.ProviderNetwork != nil && vm.ProviderNetwork.VPC.Subnet != nil {
		s.OVNSubnet = vm.ProviderNetwork.VPC.Subnet.Name
	}
	rs.networkMultiQueue(s, p, vm)
	rs.evictionStrategy(s, p.Child("evictionStrategy"), vm.EvictionStrategy)
	rs.networks(s, p.Child("networks"), vm.Networks)
	rs.tuning(s, p.Child("tuning"), vm.Tuning)
}

// flavor resolves the VirtualMachineInstancePreset name; the profile is
// ignored, as upstream ignores it.
func (rs *resolution) flavor(s *Settings, p *field.Path, f Flavor) {
	namePath := p.Child("name")
	if s.Flavor = rs.str(namePath, f.Name); s.Flavor != "" {
		rs.dnsSubdomain(namePath, s.Flavor)
	}
	if isSetString(f.Profile) {
		rs.warn("%s is ignored", p.Child("profile"))
	}
}

// matcher checks an instancetype or preference matcher. Its other fields
// (revisionName, inferFromVolume, inferFromVolumeFailurePolicy) are passed
// on untouched.
func (rs *resolution) matcher(p *field.Path, name, kind string, kinds []string) {
	if name == "" {
		rs.add(field.Required(p.Child("name"), ""))
	} else {
		rs.dnsSubdomain(p.Child("name"), name)
	}
	if kind != "" && !containsValue(kinds, kind) {
		rs.add(field.NotSupported(p.Child("kind"), kind, kinds))
	}
}

// resources resolves the CPU and memory of the VM. An instancetype sets
// both, so cpus, memory and vcpus are then ignored, as upstream does. A
// flavor's VirtualMachineInstancePreset may size the VM too, so with a flavor
// cpus and memory are optional (seed 002's flavor example sets neither).
func (rs *resolution) resources(s *Settings, p *field.Path, t *Template, hasInstancetype, hasFlavor bool) {
	if hasInstancetype {
		var ignored []string
		if t.VCPUs.Cores != 0 {
			ignored = append(ignored, "vcpus")
		}
		if isSetString(t.CPUs) {
			ignored = append(ignored, "cpus")
		}
		if isSetString(t.Memory) {
			ignored = append(ignored, "memory")
		}
		if len(ignored) > 0 {
			rs.warn("%s: %s ignored because virtualMachine.instancetype sets the CPUs and memory", p, strings.Join(ignored, ", "))
		}
		return
	}

	coresPath, cpusPath := p.Child("vcpus", "cores"), p.Child("cpus")
	switch cores := t.VCPUs.Cores; {
	case cores < 0:
		rs.add(field.Invalid(coresPath, cores, "must be greater than zero"))
	case cores > 0 && isSetString(t.CPUs):
		rs.add(field.Forbidden(cpusPath, "may not be set together with vcpus.cores; set one of them"))
	case cores > 0:
		s.VCPUCores = cores
	default:
		if cpus := rs.str(cpusPath, t.CPUs); cpus == "" {
			if !hasFlavor {
				rs.add(field.Required(cpusPath, "a Kubernetes quantity such as 2 or 500m, unless vcpus.cores, virtualMachine.instancetype or virtualMachine.flavor is set"))
			}
		} else {
			s.CPUs = rs.positiveQuantity(cpusPath, cpus, "2 or 500m")
		}
	}
	memoryPath := p.Child("memory")
	memory := rs.str(memoryPath, t.Memory)
	if memory == "" && hasFlavor {
		return
	}
	s.Memory = rs.requiredQuantity(memoryPath, memory, "2Gi or 4096M")
}

// evictionStrategy defaults to External, as upstream does.
func (rs *resolution) evictionStrategy(s *Settings, p *field.Path, v string) {
	strategy := kubevirtcorev1.EvictionStrategy(v)
	if strategy == "" {
		strategy = kubevirtcorev1.EvictionStrategyExternal
	}
	enum(rs, p, strategy, []kubevirtcorev1.EvictionStrategy{
		kubevirtcorev1.EvictionStrategyExternal,
		kubevirtcorev1.EvictionStrategyLiveMigrate,
		kubevirtcorev1.EvictionStrategyLiveMigrateIfPossible,
	})
	s.EvictionStrategy = strategy
}
