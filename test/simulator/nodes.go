package simulator

import (
	"context"
	"fmt"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// KubeletVersion is the version simulated Nodes report.
const KubeletVersion = "v1.33.4"

// ProviderID is the providerID of the Node of a VM.
func ProviderID(vmName string) string {
	return "kubevirt://" + vmName
}

// registerNode creates the user-cluster Node of a VM whose VMI runs, as
// its kubelet would, and marks it Ready with the VMI's address; the Node of
// a VM whose VMI does not run becomes not ready.
func (r *reconciler) registerNode(ctx context.Context, vm *kubevirtcorev1.VirtualMachine) error {
	if r.opts.UserClient == nil {
		return nil
	}
	vmi := &kubevirtcorev1.VirtualMachineInstance{}
	if err := r.client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(vm), vmi); err != nil {
		if apierrors.IsNotFound(err) {
			return r.markNodeNotReady(ctx, vm.Name)
		}
		return err
	}
	if vmi.Status.Phase != kubevirtcorev1.Running || len(vmi.Status.Interfaces) == 0 {
		return r.markNodeNotReady(ctx, vm.Name)
	}
	node := &corev1.Node{}
	err := r.opts.UserClient.Get(ctx, ctrlruntimeclient.ObjectKey{Name: vm.Name}, node)
	if apierrors.IsNotFound(err) {
		node = &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: vm.Name, Labels: map[string]string{corev1.LabelHostname: vm.Name}},
			Spec:       corev1.NodeSpec{ProviderID: ProviderID(vm.Name)},
		}
		err = r.opts.UserClient.Create(ctx, node)
	}
	if err != nil {
		return fmt.Errorf("failed to register Node %s: %w", vm.Name, err)
	}
	if nodeReady(node) {
		return nil
	}
	now := metav1.Now()
	node.Status.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: vmi.Status.Interfaces[0].IP},
		{Type: corev1.NodeHostName, Address: vm.Name},
	}
	node.Status.Conditions = []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		Message: "simulated kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now,
	}}
	node.Status.NodeInfo.KubeletVersion = KubeletVersion
	if err := r.opts.UserClient.Status().Update(ctx, node); err != nil {
		return fmt.Errorf("failed to update the status of Node %s: %w", vm.Name, err)
	}
	return nil
}

// removeNode deletes the Node of a VM that is gone, as a cloud controller
// would once the kubelet stops; it leaves Nodes of other providers alone.
func (r *reconciler) removeNode(ctx context.Context, vmName string) error {
	if r.opts.UserClient == nil {
		return nil
	}
	node := &corev1.Node{}
	if err := r.opts.UserClient.Get(ctx, ctrlruntimeclient.ObjectKey{Name: vmName}, node); err != nil {
		return ctrlruntimeclient.IgnoreNotFound(err)
	}
	if node.Spec.ProviderID != ProviderID(vmName) {
		return nil
	}
	if err := r.opts.UserClient.Delete(ctx, node); ctrlruntimeclient.IgnoreNotFound(err) != nil {
		return fmt.Errorf("failed to delete Node %s: %w", vmName, err)
	}
	return nil
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
