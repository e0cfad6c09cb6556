package machine

import (
	"fmt"
	"slices"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Outcomes of the evacuations counter.
const (
	outcomeRestarted = "restarted"
	outcomeMigrating = "migrating"
	outcomeReplaced  = "replaced"
)

// evacuationPlan is how the Machine of an evacuated VMI leaves the infra
// node now.
type evacuationPlan struct {
	// policy is the VMI's policy: explicit (AnnotationEvacuationPolicy)
	// or, without one, the default its disks allow.
	policy config.EvacuationPolicy
	// action is the way taken now: the policy, or the fallback when the
	// policy cannot be followed; "" for none.
	action config.EvacuationPolicy
	// fallback says why action is not policy; "" when it is.
	fallback string
}

// planEvacuation chooses the way out for an evacuated VMI. Without an
// explicit policy a VMI with a disk that is not ReadWriteMany is replaced
// (its disks cannot follow it to another infra node), one KubeVirt can
// live-migrate (condition LiveMigratable, or evictionStrategy LiveMigrate or
// LiveMigrateIfPossible) is migrated, any other is restarted. A live
// migration falls back when the VMI cannot migrate or its migration off the
// node failed: to restart when its disks are ReadWriteMany, else to
// replace. A Machine that no MachineSet controls is restarted instead of
// replaced, since nothing would replace it. A VMI with neither a policy nor
// an evictionStrategy gets no plan (action ""): KubeVirt's cluster-wide
// strategy applies to it.
func planEvacuation(vmi *kubevirtcorev1.VirtualMachineInstance, machine *clusterv1alpha1.Machine) evacuationPlan {
	policy, explicit := config.ParseEvacuationPolicy(vmi.Annotations[config.AnnotationEvacuationPolicy])
	switch {
	case explicit:
	case vmi.Spec.EvictionStrategy == nil:
		// KubeVirt's cluster-wide evictionStrategy applies, which this
		// controller does not read: the evacuation is left to KubeVirt.
		return evacuationPlan{}
	default:
		policy = defaultEvacuationPolicy(vmi)
	}
	plan := evacuationPlan{policy: policy, action: policy}
	if policy == config.EvacuationLiveMigrate {
		if why := cannotMigrate(vmi); why != "" {
			plan.action, plan.fallback = config.EvacuationRestart, why
			if !disksShared(vmi) {
				plan.action = config.EvacuationReplace
			}
		}
	}
	if plan.action == config.EvacuationReplace && machineSetOf(machine) == "" {
		plan.action = config.EvacuationRestart
		plan.fallback = joinReasons(plan.fallback, "no MachineSet controls the Machine, so nothing would replace it")
	}
	return plan
}

// defaultEvacuationPolicy is the policy of a VMI without an explicit one.
func defaultEvacuationPolicy(vmi *kubevirtcorev1.VirtualMachineInstance) config.EvacuationPolicy {
	switch {
	case !disksShared(vmi):
		return config.EvacuationReplace
	case liveMigratable(vmi) == corev1.ConditionTrue, migratesOnEviction(vmi):
		return config.EvacuationLiveMigrate
	default:
		return config.EvacuationRestart
	}
}

// disksShared reports whether every claim of the VMI, as KubeVirt
// records it in status.volumeStatus, is ReadWriteMany. Claims KubeVirt has
// not recorded yet do not count.
func disksShared(vmi *kubevirtcorev1.VirtualMachineInstance) bool {
	for _, vs := range vmi.Status.VolumeStatus {
		if info := vs.PersistentVolumeClaimInfo; info != nil && !slices.Contains(info.AccessModes, corev1.ReadWriteMany) {
			return false
		}
	}
	return true
}

// migratesOnEviction reports whether the VMI's evictionStrategy asks
// KubeVirt to live-migrate it.
func migratesOnEviction(vmi *kubevirtcorev1.VirtualMachineInstance) bool {
	switch ptr.Deref(vmi.Spec.EvictionStrategy, "") {
	case kubevirtcorev1.EvictionStrategyLiveMigrate, kubevirtcorev1.EvictionStrategyLiveMigrateIfPossible:
		return true
	default:
		return false
	}
}

// liveMigratable returns the status of the VMI's LiveMigratable condition,
// Unknown without one.
func liveMigratable(vmi *kubevirtcorev1.VirtualMachineInstance) corev1.ConditionStatus {
	for _, c := range vmi.Status.Conditions {
		if c.Type == kubevirtcorev1.VirtualMachineInstanceIsMigratable {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

// cannotMigrate says why the evacuated VMI cannot leave by live migration,
// "" when it can: KubeVirt found it not migratable, or its last migration
// off the evacuated node failed. KubeVirt records a migration in
// status.migrationState once the migration's target pod runs, and marks it
// failed there when the migration fails.
func cannotMigrate(vmi *kubevirtcorev1.VirtualMachineInstance) string {
	for _, c := range vmi.Status.Conditions {
		if c.Type == kubevirtcorev1.VirtualMachineInstanceIsMigratable && c.Status == corev1.ConditionFalse {
			return fmt.Sprintf("KubeVirt cannot live-migrate VirtualMachineInstance %s (%s: %s)", vmi.Name, c.Reason, c.Message)
		}
	}
	if ms := vmi.Status.MigrationState; migrationFailed(vmi) {
		return fmt.Sprintf("the live migration %s of VirtualMachineInstance %s off infra node %s failed: %s",
			ms.MigrationUID, vmi.Name, ms.SourceNode, ms.FailureReason)
	}
	return ""
}

// migrationFailed reports whether the VMI's last migration, off the node
// it is evacuated from, failed.
func migrationFailed(vmi *kubevirtcorev1.VirtualMachineInstance) bool {
	ms := vmi.Status.MigrationState
	return ms != nil && ms.Failed && ms.SourceNode == vmi.Status.EvacuationNodeName
}

// migrationInFlight reports whether a migration of the VMI off the node it
// is evacuated from is under way; KubeVirt refuses another one meanwhile.
func migrationInFlight(vmi *kubevirtcorev1.VirtualMachineInstance) bool {
	ms := vmi.Status.MigrationState
	return ms != nil && !ms.Failed && !ms.Completed && ms.SourceNode == vmi.Status.EvacuationNodeName
}

// machineSetOf returns the name of the MachineSet controlling the Machine,
// "" when none does.
func machineSetOf(machine *clusterv1alpha1.Machine) string {
	if ref := metav1.GetControllerOf(machine); ref != nil && ref.Kind == "MachineSet" {
		return ref.Name
	}
	return ""
}

// joinReasons joins two explanations with "; ", leaving out empty ones.
func joinReasons(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	default:
		return a + "; " + b
	}
}
