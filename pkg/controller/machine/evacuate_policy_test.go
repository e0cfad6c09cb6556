package machine

import (
	"strings"
	"testing"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// vmiOpt changes a VMI of evacuatedVMI.
type vmiOpt func(*kubevirtcorev1.VirtualMachineInstance)

// evacuatedVMI returns a running VMI named m-1 on infra-1 that KubeVirt
// evacuates from infra-1, with evictionStrategy External.
func evacuatedVMI(opts ...vmiOpt) *kubevirtcorev1.VirtualMachineInstance {
	vmi := &kubevirtcorev1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "m-1", Namespace: "tenant", UID: "vmi-uid"},
		Spec:       kubevirtcorev1.VirtualMachineInstanceSpec{EvictionStrategy: ptr.To(kubevirtcorev1.EvictionStrategyExternal)},
		Status: kubevirtcorev1.VirtualMachineInstanceStatus{
			Phase: kubevirtcorev1.Running, NodeName: "infra-1", EvacuationNodeName: "infra-1",
		},
	}
	for _, opt := range opts {
		opt(vmi)
	}
	return vmi
}

// withPolicy sets the VMI's explicit evacuation policy.
func withPolicy(p string) vmiOpt {
	return func(vmi *kubevirtcorev1.VirtualMachineInstance) {
		metav1.SetMetaDataAnnotation(&vmi.ObjectMeta, config.AnnotationEvacuationPolicy, p)
	}
}

// withClaim records a claim of the VMI as KubeVirt does in volumeStatus.
func withClaim(mode corev1.PersistentVolumeAccessMode) vmiOpt {
	return func(vmi *kubevirtcorev1.VirtualMachineInstance) {
		name := "disk-" + strings.ToLower(string(mode))
		vmi.Status.VolumeStatus = append(vmi.Status.VolumeStatus, kubevirtcorev1.VolumeStatus{
			Name: name, PersistentVolumeClaimInfo: &kubevirtcorev1.PersistentVolumeClaimInfo{
				ClaimName: name, AccessModes: []corev1.PersistentVolumeAccessMode{mode},
			},
		})
	}
}

// withMigratable sets the VMI's LiveMigratable condition.
func withMigratable(status corev1.ConditionStatus) vmiOpt {
	return func(vmi *kubevirtcorev1.VirtualMachineInstance) {
		vmi.Status.Conditions = append(vmi.Status.Conditions, kubevirtcorev1.VirtualMachineInstanceCondition{
			Type: kubevirtcorev1.VirtualMachineInstanceIsMigratable, Status: status, Reason: "DisksNotLiveMigratable",
		})
	}
}

// withStrategy sets the VMI's evictionStrategy; "" unsets it.
func withStrategy(s kubevirtcorev1.EvictionStrategy) vmiOpt {
	return func(vmi *kubevirtcorev1.VirtualMachineInstance) {
		vmi.Spec.EvictionStrategy = nil
		if s != "" {
			vmi.Spec.EvictionStrategy = ptr.To(s)
		}
	}
}

// withMigration records the VMI's last migration off source.
func withMigration(source string, failed bool) vmiOpt {
	return func(vmi *kubevirtcorev1.VirtualMachineInstance) {
		vmi.Status.MigrationState = &kubevirtcorev1.VirtualMachineInstanceMigrationState{
			MigrationUID: "mig-uid", SourceNode: source, TargetNode: "infra-2", Failed: failed, Completed: failed,
			FailureReason: "target pod is down",
		}
	}
}

// ownedMachine returns newMachine controlled by MachineSet ms-1.
func ownedMachine() *clusterv1alpha1.Machine {
	m := newMachine()
	m.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: clusterv1alpha1.SchemeGroupVersion.String(), Kind: "MachineSet", Name: "ms-1", UID: "ms-uid", Controller: ptr.To(true),
	}}
	return m
}

func TestPlanEvacuation(t *testing.T) {
	const (
		restart = config.EvacuationRestart
		live    = config.EvacuationLiveMigrate
		replace = config.EvacuationReplace
	)
	for _, tc := range []struct {
		name    string
		vmi     *kubevirtcorev1.VirtualMachineInstance
		machine *clusterv1alpha1.Machine
		// policy and action are the plan; fallback is part of its reason.
		policy, action config.EvacuationPolicy
		fallback       string
	}{
		{name: "default: a ReadWriteOnce disk is replaced", vmi: evacuatedVMI(withClaim(corev1.ReadWriteMany), withClaim(corev1.ReadWriteOnce)),
			machine: ownedMachine(), policy: replace, action: replace},
		{name: "default: shared disks of a migratable VMI migrate", vmi: evacuatedVMI(withClaim(corev1.ReadWriteMany), withMigratable(corev1.ConditionTrue)),
			machine: ownedMachine(), policy: live, action: live},
		{name: "default: evictionStrategy LiveMigrate migrates", vmi: evacuatedVMI(withStrategy(kubevirtcorev1.EvictionStrategyLiveMigrate)),
			machine: ownedMachine(), policy: live, action: live},
		{name: "default: a VMI of unknown migratability restarts", vmi: evacuatedVMI(withClaim(corev1.ReadWriteMany)),
			machine: ownedMachine(), policy: restart, action: restart},
		{name: "default: no evictionStrategy is left to KubeVirt", vmi: evacuatedVMI(withStrategy("")), machine: ownedMachine()},
		{name: "explicit restart beats ReadWriteOnce", vmi: evacuatedVMI(withPolicy("restart"), withClaim(corev1.ReadWriteOnce)),
			machine: ownedMachine(), policy: restart, action: restart},
		{name: "explicit replace", vmi: evacuatedVMI(withPolicy("replace"), withClaim(corev1.ReadWriteMany), withMigratable(corev1.ConditionTrue)),
			machine: ownedMachine(), policy: replace, action: replace},
		{name: "explicit policy without evictionStrategy", vmi: evacuatedVMI(withPolicy("replace"), withStrategy("")),
			machine: ownedMachine(), policy: replace, action: replace},
		{name: "an unknown policy value gets the default", vmi: evacuatedVMI(withPolicy("Replace"), withClaim(corev1.ReadWriteMany)),
			machine: ownedMachine(), policy: restart, action: restart},
		{name: "failed migration falls back to restart", vmi: evacuatedVMI(withPolicy("liveMigrate"), withClaim(corev1.ReadWriteMany),
			withMigratable(corev1.ConditionTrue), withMigration("infra-1", true)),
			machine: ownedMachine(), policy: live, action: restart, fallback: "the live migration mig-uid of VirtualMachineInstance m-1 off infra node infra-1 failed: target pod is down"},
		{name: "failed migration off another node does not count", vmi: evacuatedVMI(withPolicy("liveMigrate"), withMigration("infra-3", true)),
			machine: ownedMachine(), policy: live, action: live},
		{name: "migration under way", vmi: evacuatedVMI(withPolicy("liveMigrate"), withMigration("infra-1", false)),
			machine: ownedMachine(), policy: live, action: live},
		{name: "not migratable with a ReadWriteOnce disk: replace", vmi: evacuatedVMI(withPolicy("liveMigrate"), withClaim(corev1.ReadWriteOnce),
			withMigratable(corev1.ConditionFalse)),
			machine: ownedMachine(), policy: live, action: replace, fallback: "KubeVirt cannot live-migrate VirtualMachineInstance m-1 (DisksNotLiveMigratable: )"},
		{name: "replace without a MachineSet restarts", vmi: evacuatedVMI(withClaim(corev1.ReadWriteOnce)),
			machine: newMachine(), policy: replace, action: restart, fallback: "no MachineSet controls the Machine"},
		{name: "failed migration of a standalone Machine with a ReadWriteOnce disk restarts", vmi: evacuatedVMI(
			withStrategy(kubevirtcorev1.EvictionStrategyLiveMigrate), withClaim(corev1.ReadWriteOnce), withMigration("infra-1", true)),
			machine: newMachine(), policy: replace, action: restart, fallback: "no MachineSet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := planEvacuation(tc.vmi, tc.machine)
			if got.policy != tc.policy || got.action != tc.action {
				t.Errorf("plan %q → %q, want %q → %q (fallback %q)", got.policy, got.action, tc.policy, tc.action, got.fallback)
			}
			if (tc.fallback == "") != (got.fallback == "") || !strings.Contains(got.fallback, tc.fallback) {
				t.Errorf("fallback %q, want it to contain %q", got.fallback, tc.fallback)
			}
		})
	}
}
