package tenantcluster

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
)

// delete tears a TenantCluster down: its VirtualMachines first, then its
// namespace, then its finalizer. Each step waits for the previous one.
func (r *Reconciler) delete(ctx context.Context, tc *infrav1alpha1.TenantCluster) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(tc, infrav1alpha1.Finalizer) {
		return reconcile.Result{}, nil
	}
	before := tc.Status.DeepCopy()
	done, step, err := r.teardown(ctx, tc)
	c := metav1.Condition{Type: infrav1alpha1.ConditionDeleting, Status: metav1.ConditionTrue, Reason: step.reason, Message: step.message, ObservedGeneration: tc.Generation}
	if err != nil {
		c.Message = err.Error()
	}
	setStatusCondition(tc, c)
	if !done {
		if serr := r.updateStatus(ctx, tc, before); serr != nil {
			err = errors.Join(err, serr)
		}
		return reconcile.Result{RequeueAfter: pollInterval}, err
	}
	controllerutil.RemoveFinalizer(tc, infrav1alpha1.Finalizer)
	if err := r.Client.Update(ctx, tc); err != nil {
		return reconcile.Result{}, fmt.Errorf("failed to remove the finalizer of TenantCluster %s: %w", tc.Name, err)
	}
	return reconcile.Result{}, nil
}

// step describes the deletion step a TenantCluster waits for.
type step struct {
	reason, message string
}

// teardown runs the next deletion step; done is true once nothing is left.
func (r *Reconciler) teardown(ctx context.Context, tc *infrav1alpha1.TenantCluster) (done bool, s step, err error) {
	name := r.Namespace(tc)
	var ns corev1.Namespace
	if err := r.Client.Get(ctx, types.NamespacedName{Name: name}, &ns); err != nil {
		if apierrors.IsNotFound(err) {
			return true, step{"Deleted", "namespace " + name + " is gone"}, nil
		}
		return false, step{"Failed", ""}, fmt.Errorf("failed to get namespace %s: %w", name, err)
	}
	if ns.Labels[OwnerLabel] != tc.Name {
		// Not ours (another TenantCluster's or never adopted): leave it.
		return true, step{"Released", "namespace " + name + " is not owned"}, nil
	}
	vms := emptyList(VirtualMachineGVK)
	if err := r.Client.List(ctx, vms, ctrlruntimeclient.InNamespace(name)); err != nil {
		return false, step{"Failed", ""}, fmt.Errorf("failed to list the VirtualMachines in %s: %w", name, err)
	}
	if n := len(vms.Items); n > 0 {
		for i := range vms.Items {
			if vms.Items[i].GetDeletionTimestamp() != nil {
				continue
			}
			if err := r.Client.Delete(ctx, &vms.Items[i]); ctrlruntimeclient.IgnoreNotFound(err) != nil {
				return false, step{"Failed", ""}, fmt.Errorf("failed to delete VirtualMachine %s/%s: %w", name, vms.Items[i].GetName(), err)
			}
		}
		return false, step{"DeletingVirtualMachines", fmt.Sprintf("waiting for %d VirtualMachines in %s to go", n, name)}, nil
	}
	if ns.DeletionTimestamp.IsZero() {
		if err := r.Client.Delete(ctx, &ns); ctrlruntimeclient.IgnoreNotFound(err) != nil {
			return false, step{"Failed", ""}, fmt.Errorf("failed to delete namespace %s: %w", name, err)
		}
	}
	return false, step{"DeletingNamespace", "waiting for namespace " + name + " to go"}, nil
}
