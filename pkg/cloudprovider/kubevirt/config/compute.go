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
		s.Instancetype = vm.Instancetype.DeepCopy()
	}
	if vm.Preference != nil {
		s.Preference = vm.Preference.DeepCopy()
	}
	rs.resources(s, p.Child("template"), &vm.Template, vm.Instancetype != nil, s.Flavor != "")
	rs.disks(s, p.Child("template"), &vm.Template)
	if m := vm.Instancetype; m != nil {
		rs.matcher(s, p.Child("instancetype"), matcherOf(m.Name, m.Kind, m.InferFromVolume, m.InferFromVolumeFailurePolicy), instancetypeKinds)
	}
	if m := vm.Preference; m != nil {
		rs.matcher(s, p.Child("preference"), matcherOf(m.Name, m.Kind, m.InferFromVolume, m.InferFromVolumeFailurePolicy), preferenceKinds)
	}
	rs.devices(s, p.Child("template"), &vm.Template)
	rs.dns(s, p, vm)
	rs.location(s, p.Child("location"), vm.Location)
	rs.placement(s, p, vm)
	if vm.ProviderNetwork != nil && vm.ProviderNetwork.VPC.Subnet != nil {
		s.OVNSubnet = vm.ProviderNetwork.VPC.Subnet.Name
	}
	rs.networkMultiQueue(s, p, vm)
	rs.evictionStrategy(s, p.Child("evictionStrategy"), vm.EvictionStrategy)
	rs.evacuationPolicy(s, p.Child("evacuationPolicy"), vm)
	rs.networks(s, p.Child("networks"), vm.Networks)
	rs.tuning(s, p.Child("tuning"), vm.Tuning)
	rs.sshService(s, p.Child("sshService"), vm.SSHService)
}

// flavor resolves the VirtualMachineInstancePreset name; the profile is
// ignored, as upstream ignores it.
func (rs *resolution) flavor(s *Settings, p *field.Path, f Flavor) {
	namePath := p.Child("name")
	if s.Flavor = rs.str(namePath, f.Name); s.Flavor != "" {
		rs.dnsSubdomain(namePath, s.Flavor)
	}
	if isSetString(f.Profile) {
		rs.warnf("%s is ignored", p.Child("profile"))
	}
}

// matcherFields are the fields an instancetype and a preference matcher
// share.
type matcherFields struct {
	name, kind, inferFromVolume string
	failurePolicy               *kubevirtcorev1.InferFromVolumeFailurePolicy
}

func matcherOf(name, kind, infer string, policy *kubevirtcorev1.InferFromVolumeFailurePolicy) matcherFields {
	return matcherFields{name: name, kind: kind, inferFromVolume: infer, failurePolicy: policy}
}

// inferencePolicies are the values of inferFromVolumeFailurePolicy.
var inferencePolicies = []string{string(kubevirtcorev1.IgnoreInferFromVolumeFailure), string(kubevirtcorev1.RejectInferFromVolumeFailure)}

// matcher checks an instancetype or preference matcher as KubeVirt's
// admission does: a name (with an optional kind), or inferFromVolume naming
// one of the VM's disk volumes, from whose source KubeVirt infers it; never
// both. revisionName is passed on untouched.
func (rs *resolution) matcher(s *Settings, p *field.Path, m matcherFields, kinds []string) {
	switch {
	case m.inferFromVolume != "" && m.name != "":
		rs.add(field.Forbidden(p.Child("inferFromVolume"), "may not be set together with name: KubeVirt infers the name from the volume"))
	case m.inferFromVolume != "" && m.kind != "":
		rs.add(field.Forbidden(p.Child("inferFromVolume"), "may not be set together with kind: KubeVirt infers the kind from the volume"))
	case m.inferFromVolume != "":
		if volumes := diskVolumes(s); !containsValue(volumes, m.inferFromVolume) {
			rs.add(field.NotSupported(p.Child("inferFromVolume"), m.inferFromVolume, volumes))
		}
	case m.name == "":
		rs.add(field.Required(p.Child("name"), "or inferFromVolume"))
	default:
		rs.dnsSubdomain(p.Child("name"), m.name)
	}
	if m.kind != "" && !containsValue(kinds, m.kind) {
		rs.add(field.NotSupported(p.Child("kind"), m.kind, kinds))
	}
	if m.failurePolicy != nil {
		policyPath := p.Child("inferFromVolumeFailurePolicy")
		if !containsValue(inferencePolicies, string(*m.failurePolicy)) {
			rs.add(field.NotSupported(policyPath, *m.failurePolicy, inferencePolicies))
		} else if m.inferFromVolume == "" {
			rs.warnf("%s is ignored without inferFromVolume", policyPath)
		}
	}
}

// diskVolumes are the names of the VM's volumes backed by DataVolumes: the
// primary disk's and the secondary disks'.
func diskVolumes(s *Settings) []string {
	names := []string{PrimaryDiskVolumeName}
	for _, d := range s.SecondaryDisks {
		names = append(names, d.Name)
	}
	return names
}

// resources resolves the CPU and memory of the VM. An instancetype sets
// both, so cpus, memory and vcpus are then ignored, as upstream does. A
// flavor's VirtualMachineInstancePreset may size the VM too, so with a flavor
// cpus and memory are optional (Kubermatic's documented flavor example sets neither).
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
			rs.warnf("%s: %s ignored because virtualMachine.instancetype sets the CPUs and memory", p, strings.Join(ignored, ", "))
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
