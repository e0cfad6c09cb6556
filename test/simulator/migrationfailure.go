package simulator

import (
	"context"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// AnnotationFailMigration on a VMI ("true") makes every live migration of
// it fail: its source virt-handler reports the migration failed once the
// target is ready to receive, and KubeVirt's migration controller then
// marks the VirtualMachineInstanceMigration Failed.
const AnnotationFailMigration = "simulator.kkp-kubevirt.test/fail-migration"

// SimulatedMigrationFailure is the failure reason the source reports.
const SimulatedMigrationFailure = "simulated migration failure"

// FailMigrations makes every live migration of a VM's current VMI fail.
func FailMigrations(ctx context.Context, c ctrlruntimeclient.Client, namespace, name string) error {
	return annotate(ctx, c, ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: name}, &kubevirtcorev1.VirtualMachineInstance{}, AnnotationFailMigration)
}

// failsMigration reports whether the source node of the VMI's migration
// must fail it now: the VMI asks for it and the target announced its
// address, which is when a real source starts to send.
func failsMigration(vmi *kubevirtcorev1.VirtualMachineInstance, node string) bool {
	return vmi.Annotations[AnnotationFailMigration] == "true" && migrationSource(vmi, node) &&
		vmi.Status.MigrationState.TargetNodeAddress != ""
}

// failMigration records the end of a failed migration, as the source
// virt-handler does: the migration is completed and failed, the VMI stays on
// its node.
func failMigration(vmi *kubevirtcorev1.VirtualMachineInstance) {
	ms := vmi.Status.MigrationState
	now := ptrNow()
	if ms.StartTimestamp == nil {
		ms.StartTimestamp = now
	}
	ms.EndTimestamp, ms.Completed, ms.Failed, ms.FailureReason = now, true, true, SimulatedMigrationFailure
}
