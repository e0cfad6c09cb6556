package config

import (
	"fmt"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// EvacuationPolicy is what the machine-controller does with a Machine whose
// VM must leave an infra node that is being drained.
type EvacuationPolicy string

// Evacuation policies of virtualMachine.evacuationPolicy.
const (
	// EvacuationRestart drains the guest Node and deletes the VMI, so that
	// KubeVirt starts the VM again on another infra node. Its disks must
	// be reachable from there.
	EvacuationRestart EvacuationPolicy = "restart"
	// EvacuationLiveMigrate live-migrates the VMI; a migration that fails
	// falls back to restart, or to replace when a disk is not
	// ReadWriteMany.
	EvacuationLiveMigrate EvacuationPolicy = "liveMigrate"
	// EvacuationReplace drains the guest Node and deletes the Machine, so
	// that its MachineSet creates another one with new disks.
	EvacuationReplace EvacuationPolicy = "replace"
)

// EvacuationPolicies are the values virtualMachine.evacuationPolicy allows.
var EvacuationPolicies = []EvacuationPolicy{EvacuationRestart, EvacuationLiveMigrate, EvacuationReplace}

// AnnotationEvacuationPolicy carries an explicit evacuationPolicy on the VM
// template, hence on every VMI, where the machine-controller reads it when
// the VMI's infra node drains. VMIs without it get the policy their disks
// allow.
const AnnotationEvacuationPolicy = "machine-controller.kubevirt.io/evacuation-policy"

// ParseEvacuationPolicy returns the policy a value names, false for any
// other value.
func ParseEvacuationPolicy(v string) (EvacuationPolicy, bool) {
	p := EvacuationPolicy(v)
	return p, containsValue(EvacuationPolicies, p)
}

// evacuationPolicy resolves virtualMachine.evacuationPolicy. It runs after
// evictionStrategy: restart and replace need evictionStrategy External,
// since with LiveMigrate KubeVirt migrates the VMI itself; liveMigrate
// without an explicit evictionStrategy gets LiveMigrate, so that KubeVirt
// migrates the VMI even where no machine-controller watches the infra
// namespace.
func (rs *resolution) evacuationPolicy(s *Settings, p *field.Path, vm *VirtualMachine) {
	if vm.EvacuationPolicy == "" {
		return
	}
	policy := EvacuationPolicy(vm.EvacuationPolicy)
	if !enum(rs, p, policy, EvacuationPolicies) {
		return
	}
	s.EvacuationPolicy = policy
	migrates := s.EvictionStrategy == kubevirtcorev1.EvictionStrategyLiveMigrate ||
		s.EvictionStrategy == kubevirtcorev1.EvictionStrategyLiveMigrateIfPossible
	switch {
	case policy == EvacuationLiveMigrate && vm.EvictionStrategy == "":
		s.EvictionStrategy = kubevirtcorev1.EvictionStrategyLiveMigrate
	case policy != EvacuationLiveMigrate && migrates:
		rs.add(field.Invalid(p, vm.EvacuationPolicy, fmt.Sprintf(
			"%q needs virtualMachine.evictionStrategy %q (or none), not %q: with %[3]q KubeVirt live-migrates the VMI itself",
			policy, kubevirtcorev1.EvictionStrategyExternal, s.EvictionStrategy)))
	}
}
