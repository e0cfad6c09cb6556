package tenantcluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// DefaultTenantCleanupTimeout is how long a deletion keeps trying to reach
// a tenant cluster that fails before it gives up on the tenant side.
const DefaultTenantCleanupTimeout = 10 * time.Minute

// delete tears a TenantCluster down: its VirtualMachines first, then what
// the controllers made in the tenant cluster, then its namespace, then its
// finalizer. Each step waits for the previous one. ConditionDeleting
// reports the step waited for, written with one status patch when it
// changed.
func (r *Reconciler) delete(ctx context.Context, tc *infrav1alpha1.TenantCluster) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(tc, infrav1alpha1.Finalizer) {
		return reconcile.Result{}, nil
	}
	before := tc.Status.DeepCopy()
	done, step, err := r.teardown(ctx, tc)
	if done {
		if err := r.removeFinalizer(ctx, tc); err != nil {
			return reconcile.Result{}, err
		}
		r.Connections.Forget(r.Namespace(tc))
		return reconcile.Result{}, nil
	}
	if err != nil {
		if prev := meta.FindStatusCondition(before.Conditions, infrav1alpha1.ConditionDeleting); prev == nil || prev.Message != err.Error() {
			r.warn(tc, step.reason, err)
		}
	}
	setDeleting(tc, step, err)
	if serr := r.patchStatus(ctx, tc, before); serr != nil {
		return reconcile.Result{}, errors.Join(err, serr)
	}
	// A failed step is retried on the poll interval, not with the queue's
	// growing backoff: controller-runtime ignores a requeue returned with
	// an error, and the cleanup timeout must hold within seconds.
	if err != nil {
		log.FromContext(ctx).Error(err, "deletion step failed; retrying", "step", step.reason, "after", pollInterval)
	}
	return reconcile.Result{RequeueAfter: pollInterval}, nil
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
			return true, step{infrav1alpha1.ReasonDeleted, "namespace " + name + " is gone"}, nil
		}
		return false, step{infrav1alpha1.ReasonFailed, ""}, fmt.Errorf("failed to get namespace %s: %w", name, err)
	}
	if ns.Labels[OwnerLabel] != tc.Name {
		// Not ours (another TenantCluster's or never adopted): leave it.
		return true, step{infrav1alpha1.ReasonReleased, "namespace " + name + " is not owned"}, nil
	}
	if !ns.DeletionTimestamp.IsZero() {
		return false, step{infrav1alpha1.ReasonDeletingNamespace, "waiting for namespace " + name + " to go"}, nil
	}
	for _, phase := range []func(context.Context, *infrav1alpha1.TenantCluster, *corev1.Namespace) (bool, step, error){
		r.markDeleting, r.deleteVirtualMachines, r.cleanTenant,
	} {
		if done, s, err := phase(ctx, tc, &ns); !done || err != nil {
			return false, s, err
		}
	}
	//writepath:direct the namespace is the TenantCluster's by its owner label, checked when it was read
	if err := r.Client.Delete(ctx, &ns); ctrlruntimeclient.IgnoreNotFound(err) != nil {
		return false, step{infrav1alpha1.ReasonFailed, ""}, fmt.Errorf("failed to delete namespace %s: %w", name, err)
	}
	return false, step{infrav1alpha1.ReasonDeletingNamespace, "waiting for namespace " + name + " to go"}, nil
}

// markDeleting annotates the namespace so that the other controllers treat
// it as gone and stop writing to the infra namespace and the tenant
// cluster while they are cleaned up.
func (r *Reconciler) markDeleting(ctx context.Context, _ *infrav1alpha1.TenantCluster, ns *corev1.Namespace) (bool, step, error) {
	if ns.Annotations[tenant.DeletingAnnotation] == "true" {
		return true, step{}, nil
	}
	base := ns.DeepCopy()
	if ns.Annotations == nil {
		ns.Annotations = map[string]string{}
	}
	ns.Annotations[tenant.DeletingAnnotation] = "true"
	//writepath:direct one annotation set by merge patch on the namespace as read
	if err := r.Client.Patch(ctx, ns, ctrlruntimeclient.MergeFrom(base)); err != nil {
		return false, step{infrav1alpha1.ReasonFailed, ""}, fmt.Errorf("failed to mark namespace %s as deleting: %w", ns.Name, err)
	}
	return false, step{infrav1alpha1.ReasonStopping, "the controllers stop writing for namespace " + ns.Name}, nil
}

// deleteVirtualMachines deletes the VirtualMachines of the namespace and
// reports done once none is left.
func (r *Reconciler) deleteVirtualMachines(ctx context.Context, _ *infrav1alpha1.TenantCluster, ns *corev1.Namespace) (bool, step, error) {
	vms := emptyList(VirtualMachineGVK)
	if err := r.Client.List(ctx, vms, ctrlruntimeclient.InNamespace(ns.Name)); err != nil {
		return false, step{infrav1alpha1.ReasonFailed, ""}, fmt.Errorf("failed to list the VirtualMachines in %s: %w", ns.Name, err)
	}
	if len(vms.Items) == 0 {
		return true, step{}, nil
	}
	for i := range vms.Items {
		if vms.Items[i].GetDeletionTimestamp() != nil {
			continue
		}
		//writepath:direct the VirtualMachines are the machine-controller's: a deleted TenantCluster removes every one in its namespace, whoever made it
		if err := r.Client.Delete(ctx, &vms.Items[i]); ctrlruntimeclient.IgnoreNotFound(err) != nil {
			return false, step{infrav1alpha1.ReasonFailed, ""}, fmt.Errorf("failed to delete VirtualMachine %s/%s: %w", ns.Name, vms.Items[i].GetName(), err)
		}
	}
	return false, step{infrav1alpha1.ReasonDeletingVirtualMachines, fmt.Sprintf("waiting for %d VirtualMachines in %s to go", len(vms.Items), ns.Name)}, nil
}

// cleanTenant removes what the controllers made in the tenant cluster. A
// tenant cluster that cannot be cleaned for longer than the timeout, or a
// TenantCluster annotated to skip it, is left as it is.
func (r *Reconciler) cleanTenant(ctx context.Context, tc *infrav1alpha1.TenantCluster, ns *corev1.Namespace) (bool, step, error) {
	if r.Tenant == nil {
		return true, step{}, nil
	}
	if tc.Annotations[infrav1alpha1.SkipTenantCleanupAnnotation] == "true" {
		return true, step{}, nil
	}
	kubeconfig, err := r.tenantKubeconfig(ctx, ns.Name)
	if err != nil || kubeconfig == nil {
		return err == nil, step{infrav1alpha1.ReasonFailed, ""}, err
	}
	deadline := tc.DeletionTimestamp.Add(r.cleanupTimeout())
	// One attempt never runs past the deadline, so that an unreachable
	// tenant cluster (a dial that hangs) cannot stretch the timeout.
	attemptCtx, cancel := context.WithDeadline(ctx, minTime(deadline, time.Now().Add(maxCleanAttempt)))
	defer cancel()
	left, err := r.Tenant.Clean(attemptCtx, ns.Name, kubeconfig)
	if err != nil {
		if !time.Now().Before(deadline) {
			log.FromContext(ctx).Error(err, "giving up on the tenant cluster's objects", "after", r.cleanupTimeout())
			r.warn(tc, infrav1alpha1.ReasonTenantCleanupAbandoned, fmt.Errorf("gave up removing our objects from the tenant cluster after %s: %w", r.cleanupTimeout(), err))
			return true, step{}, nil
		}
		return false, step{infrav1alpha1.ReasonCleaningTenantCluster, ""}, fmt.Errorf("failed to clean the tenant cluster (retrying until %s after the deletion, or set annotation %s): %w",
			r.cleanupTimeout(), infrav1alpha1.SkipTenantCleanupAnnotation, err)
	}
	if left > 0 {
		return false, step{infrav1alpha1.ReasonCleaningTenantCluster, fmt.Sprintf("waiting for %d objects in the tenant cluster to go", left)}, nil
	}
	return true, step{}, nil
}

// tenantKubeconfig returns the tenant kubeconfig kept in the namespace, or
// nil when there is none.
func (r *Reconciler) tenantKubeconfig(ctx context.Context, namespace string) ([]byte, error) {
	return tenant.SecretData(ctx, r.APIReader, namespace, r.KubeconfigSecret, r.KubeconfigSecretKey)
}

// maxCleanAttempt bounds one attempt to clean a tenant cluster.
const maxCleanAttempt = 30 * time.Second

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func (r *Reconciler) cleanupTimeout() time.Duration {
	if r.TenantCleanupTimeout > 0 {
		return r.TenantCleanupTimeout
	}
	return DefaultTenantCleanupTimeout
}
