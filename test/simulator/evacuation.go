package simulator

import (
	"context"
	"fmt"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// SecondNodeName is the infra node VMIs move to when they leave NodeName.
const SecondNodeName = "infra-node-sim-2"

// AnnotationAvoidNode on a VirtualMachine names an infra node being
// drained: the simulator places new VMIs of the VM on another one.
const AnnotationAvoidNode = "simulator.kkp-kubevirt.test/avoid-node"

// Evacuate plays the drain of the infra node a VM's VMI runs on, as
// KubeVirt does for a VMI whose evictionStrategy is External or LiveMigrate:
// the VMI gets status.evacuationNodeName = its node, and the VM is
// annotated so that a restarted VMI lands on the other simulated node. A
// VirtualMachineInstanceMigration of the VMI is then completed by the
// simulator: the VMI moves to the other node and the mark is cleared.
func Evacuate(ctx context.Context, c ctrlruntimeclient.Client, namespace, name string) error {
	key := ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: name}
	vmi := &kubevirtcorev1.VirtualMachineInstance{}
	if err := c.Get(ctx, key, vmi); err != nil {
		return fmt.Errorf("failed to get VirtualMachineInstance %s: %w", key, err)
	}
	vm := &kubevirtcorev1.VirtualMachine{}
	if err := c.Get(ctx, key, vm); err != nil {
		return fmt.Errorf("failed to get VirtualMachine %s: %w", key, err)
	}
	vmBase := vm.DeepCopy()
	metav1.SetMetaDataAnnotation(&vm.ObjectMeta, AnnotationAvoidNode, vmi.Status.NodeName)
	if err := c.Patch(ctx, vm, ctrlruntimeclient.MergeFrom(vmBase)); err != nil {
		return fmt.Errorf("failed to annotate VirtualMachine %s: %w", key, err)
	}
	base := vmi.DeepCopy()
	vmi.Status.EvacuationNodeName = vmi.Status.NodeName
	if err := c.Patch(ctx, vmi, ctrlruntimeclient.MergeFrom(base)); err != nil {
		return fmt.Errorf("failed to mark VirtualMachineInstance %s for evacuation: %w", key, err)
	}
	return nil
}

// placement returns the infra node a new VMI of the VM runs on.
func placement(vm *kubevirtcorev1.VirtualMachine) string {
	return otherNode(vm.Annotations[AnnotationAvoidNode])
}

// otherNode returns a simulated infra node other than avoid.
func otherNode(avoid string) string {
	if avoid == NodeName {
		return SecondNodeName
	}
	return NodeName
}

// migrationToVM maps a migration to the VM of its VMI (named alike).
func migrationToVM(_ context.Context, m *kubevirtcorev1.VirtualMachineInstanceMigration) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: m.Namespace, Name: m.Spec.VMIName}}}
}

// completeMigrations completes every unfinished migration of the VM's VMI
// at once: the VMI moves to the other infra node, its evacuation mark is
// cleared and the migration Succeeded.
func (r *reconciler) completeMigrations(ctx context.Context, vm *kubevirtcorev1.VirtualMachine) error {
	list := &kubevirtcorev1.VirtualMachineInstanceMigrationList{}
	if err := r.client.List(ctx, list, ctrlruntimeclient.InNamespace(vm.Namespace)); err != nil {
		return fmt.Errorf("failed to list migrations: %w", err)
	}
	for i := range list.Items {
		m := &list.Items[i]
		if m.Spec.VMIName != vm.Name || m.Status.Phase == kubevirtcorev1.MigrationSucceeded || m.Status.Phase == kubevirtcorev1.MigrationFailed {
			continue
		}
		vmi := &kubevirtcorev1.VirtualMachineInstance{}
		if err := r.client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(vm), vmi); err != nil {
			return ctrlruntimeclient.IgnoreNotFound(err)
		}
		// The VMI records the migration: a stale cache of migrations must
		// not move it twice.
		if state := vmi.Status.MigrationState; state == nil || state.MigrationUID != m.UID {
			source := vmi.Status.NodeName
			now := metav1.Now()
			vmi.Status.NodeName, vmi.Status.EvacuationNodeName = otherNode(source), ""
			vmi.Status.MigrationState = &kubevirtcorev1.VirtualMachineInstanceMigrationState{
				MigrationUID: m.UID, SourceNode: source, TargetNode: vmi.Status.NodeName,
				StartTimestamp: &now, EndTimestamp: &now, Completed: true,
			}
			if err := r.client.Update(ctx, vmi); err != nil {
				return fmt.Errorf("failed to move VirtualMachineInstance %s: %w", vmi.Name, err)
			}
		}
		m.Status.Phase = kubevirtcorev1.MigrationSucceeded
		if err := r.client.Status().Update(ctx, m); err != nil {
			return fmt.Errorf("failed to complete migration %s: %w", m.Name, err)
		}
	}
	return nil
}
