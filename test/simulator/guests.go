package simulator

import (
	"context"
	"fmt"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// KubeletVersion is the version simulated Nodes report.
const KubeletVersion = "v1.33.4"

// LabelGuest marks the Nodes the simulated guests register; its value is
// the VM's name. The simulator changes and removes only Nodes it carries.
const LabelGuest = "simulator.kkp-kubevirt.test/guest"

// guests play the kubelets inside the guests: the guest of a running VMI
// joins the user cluster as a Ready Node named like its VM, with the VMI's
// address and no spec.providerID, as a kubelet with an external cloud
// provider registers (the machine-controller sets it); the Node goes not ready while the VMI does not run, and is
// removed, as a cloud controller would, once the VM is gone or being
// deleted.
type guests struct {
	infra ctrlruntimeclient.Reader
	user  ctrlruntimeclient.Client
	// servingCertificates: see Options.ServingCertificates.
	servingCertificates *rest.Config
}

func (g *guests) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	vm := &kubevirtcorev1.VirtualMachine{}
	if err := g.infra.Get(ctx, req.NamespacedName, vm); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, g.removeNode(ctx, req.Name)
		}
		return reconcile.Result{}, err
	}
	if vm.DeletionTimestamp != nil {
		return reconcile.Result{}, g.removeNode(ctx, vm.Name)
	}
	vmi := &kubevirtcorev1.VirtualMachineInstance{}
	if err := g.infra.Get(ctx, req.NamespacedName, vmi); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, g.markNodeNotReady(ctx, vm.Name)
		}
		return reconcile.Result{}, err
	}
	if vmi.Status.Phase != kubevirtcorev1.Running || len(vmi.Status.Interfaces) == 0 || vmi.Status.Interfaces[0].IP == "" {
		return reconcile.Result{}, g.markNodeNotReady(ctx, vm.Name)
	}
	return reconcile.Result{}, g.registerNode(ctx, vm.Name, vmi.Status.Interfaces[0].IP)
}

// registerNode creates the Node of a running guest, as its kubelet would,
// and marks it Ready with the guest's address.
func (g *guests) registerNode(ctx context.Context, name, ip string) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name, LabelGuest: name}},
	}
	if err := registerNode(ctx, g.user, node, ip, corev1.NodeStatus{}); err != nil || g.servingCertificates == nil {
		return err
	}
	return requestServingCertificate(ctx, g.servingCertificates, name, ip)
}

// markNodeNotReady sets the Ready condition of a guest's Node to Unknown, as
// the node lifecycle controller does once the guest's kubelet stops posting
// its status.
func (g *guests) markNodeNotReady(ctx context.Context, name string) error {
	node := &corev1.Node{}
	if err := g.user.Get(ctx, ctrlruntimeclient.ObjectKey{Name: name}, node); err != nil {
		return ctrlruntimeclient.IgnoreNotFound(err)
	}
	if node.Labels[LabelGuest] != name || !nodeReady(node) {
		return nil
	}
	now := metav1.Now()
	for i := range node.Status.Conditions {
		if c := &node.Status.Conditions[i]; c.Type == corev1.NodeReady {
			c.Status, c.Reason, c.Message = corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
			c.LastTransitionTime = now
		}
	}
	if err := g.user.Status().Update(ctx, node); err != nil {
		return fmt.Errorf("failed to mark Node %s not ready: %w", name, err)
	}
	return nil
}

// removeNode deletes the Node of a VM that is gone; it leaves Nodes of other
// providers alone.
func (g *guests) removeNode(ctx context.Context, name string) error {
	node := &corev1.Node{}
	if err := g.user.Get(ctx, ctrlruntimeclient.ObjectKey{Name: name}, node); err != nil {
		return ctrlruntimeclient.IgnoreNotFound(err)
	}
	if node.Labels[LabelGuest] != name {
		return nil
	}
	if err := g.user.Delete(ctx, node); ctrlruntimeclient.IgnoreNotFound(err) != nil {
		return fmt.Errorf("failed to delete Node %s: %w", name, err)
	}
	return nil
}
