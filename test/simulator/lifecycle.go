package simulator

import (
	"context"
	"fmt"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// AnnotationNoRestart on a VirtualMachine ("true") makes the simulator
// leave its ended VMI alone, as KubeVirt would while it backs off the
// restarts of a VM that keeps failing.
const AnnotationNoRestart = "simulator.kkp-kubevirt.test/no-restart"

// StopVMI ends the VMI of a VM: its phase becomes Failed, as when the guest
// crashes. With restart the simulator then restarts it like KubeVirt does
// for runStrategy Always (the VMI is deleted and created again); without,
// the VM is annotated AnnotationNoRestart first and the VMI stays Failed.
func StopVMI(ctx context.Context, c ctrlruntimeclient.Client, namespace, name string, restart bool) error {
	key := ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: name}
	if !restart {
		vm := &kubevirtcorev1.VirtualMachine{}
		if err := c.Get(ctx, key, vm); err != nil {
			return fmt.Errorf("failed to get VirtualMachine %s: %w", key, err)
		}
		base := vm.DeepCopy()
		metav1.SetMetaDataAnnotation(&vm.ObjectMeta, AnnotationNoRestart, "true")
		if err := c.Patch(ctx, vm, ctrlruntimeclient.MergeFrom(base)); err != nil {
			return fmt.Errorf("failed to annotate VirtualMachine %s: %w", key, err)
		}
	}
	vmi := &kubevirtcorev1.VirtualMachineInstance{}
	if err := c.Get(ctx, key, vmi); err != nil {
		return fmt.Errorf("failed to get VirtualMachineInstance %s: %w", key, err)
	}
	base := vmi.DeepCopy()
	vmi.Status.Phase = kubevirtcorev1.Failed
	vmi.Status.Interfaces = nil
	if err := c.Patch(ctx, vmi, ctrlruntimeclient.MergeFrom(base)); err != nil {
		return fmt.Errorf("failed to stop VirtualMachineInstance %s: %w", key, err)
	}
	return nil
}

// restartEnded handles a VMI that ended (Succeeded or Failed) as KubeVirt's
// VM controller does for the VM's run strategy: Always restarts any ended
// VMI, RerunOnFailure only a failed one, by deleting it (its deletion event
// brings the VM back here, and a new VMI is created). It reports whether
// the VMI ended.
func (r *reconciler) restartEnded(ctx context.Context, vm *kubevirtcorev1.VirtualMachine, vmi *kubevirtcorev1.VirtualMachineInstance) (bool, error) {
	phase := vmi.Status.Phase
	if phase != kubevirtcorev1.Failed && phase != kubevirtcorev1.Succeeded {
		return false, nil
	}
	if vm.Annotations[AnnotationNoRestart] == "true" || vmi.DeletionTimestamp != nil {
		return true, nil
	}
	rs := kubevirtcorev1.RunStrategyAlways
	if vm.Spec.RunStrategy != nil {
		rs = *vm.Spec.RunStrategy
	}
	if rs != kubevirtcorev1.RunStrategyAlways && (rs != kubevirtcorev1.RunStrategyRerunOnFailure || phase != kubevirtcorev1.Failed) {
		return true, nil
	}
	if err := r.client.Delete(ctx, vmi, ctrlruntimeclient.Preconditions{UID: &vmi.UID}); ctrlruntimeclient.IgnoreNotFound(err) != nil {
		return true, fmt.Errorf("failed to delete the ended VirtualMachineInstance %s: %w", vmi.Name, err)
	}
	return true, nil
}

// markNodeNotReady sets the Ready condition of a VM's Node to Unknown, as
// the node lifecycle controller does once the guest's kubelet stops
// posting its status.
func (r *reconciler) markNodeNotReady(ctx context.Context, vmName string) error {
	if r.opts.UserClient == nil {
		return nil
	}
	node := &corev1.Node{}
	if err := r.opts.UserClient.Get(ctx, ctrlruntimeclient.ObjectKey{Name: vmName}, node); err != nil {
		return ctrlruntimeclient.IgnoreNotFound(err)
	}
	if node.Spec.ProviderID != ProviderID(vmName) || !nodeReady(node) {
		return nil
	}
	now := metav1.Now()
	for i := range node.Status.Conditions {
		if c := &node.Status.Conditions[i]; c.Type == corev1.NodeReady {
			c.Status, c.Reason, c.Message = corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
			c.LastTransitionTime = now
		}
	}
	if err := r.opts.UserClient.Status().Update(ctx, node); err != nil {
		return fmt.Errorf("failed to mark Node %s not ready: %w", vmName, err)
	}
	return nil
}
