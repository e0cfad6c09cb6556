package tenantcluster

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
)

// FieldOwner is the field manager of the status the controller applies:
// status.namespace and the conditions of ownedConditions.
const FieldOwner = "tenant-cluster-controller"

// addFinalizer adds the finalizer to tc unless it has it.
func (r *Reconciler) addFinalizer(ctx context.Context, tc *infrav1alpha1.TenantCluster) error {
	if controllerutil.ContainsFinalizer(tc, infrav1alpha1.Finalizer) {
		return nil
	}
	return r.patchFinalizers(ctx, tc, controllerutil.AddFinalizer, "add the finalizer to")
}

// removeFinalizer removes the finalizer from tc.
func (r *Reconciler) removeFinalizer(ctx context.Context, tc *infrav1alpha1.TenantCluster) error {
	if !controllerutil.ContainsFinalizer(tc, infrav1alpha1.Finalizer) {
		return nil
	}
	return r.patchFinalizers(ctx, tc, controllerutil.RemoveFinalizer, "remove the finalizer from")
}

// patchFinalizers changes the finalizers of tc with a merge patch. A merge
// patch replaces a list whole, so it carries the resourceVersion: a
// finalizer another writer added since the read is never dropped, the
// conflict is retried instead. tc becomes the patched object.
func (r *Reconciler) patchFinalizers(ctx context.Context, tc *infrav1alpha1.TenantCluster, change func(ctrlruntimeclient.Object, string) bool, what string) error {
	base := tc.DeepCopy()
	change(tc, infrav1alpha1.Finalizer)
	//writepath:direct finalizers of our own TenantCluster, a merge patch guarded by its resourceVersion
	if err := r.Client.Patch(ctx, tc, ctrlruntimeclient.MergeFromWithOptions(base, ctrlruntimeclient.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("failed to %s TenantCluster %s: %w", what, tc.Name, err)
	}
	return nil
}

// patchStatus writes the part of the status of tc the controller owns
// when it differs from before, with one server-side apply of the status
// subresource. The apply needs no resourceVersion and merges the
// conditions by type: the VLAN controller's condition and status.vlan,
// written concurrently, stay as they are (a JSON merge patch would
// replace the whole list of conditions with this reconcile's copy).
func (r *Reconciler) patchStatus(ctx context.Context, tc *infrav1alpha1.TenantCluster, before *infrav1alpha1.TenantClusterStatus) error {
	if equalStatus(before, &tc.Status) {
		return nil
	}
	apply, err := statusApply(tc)
	if err != nil {
		return err
	}
	//writepath:direct the status subresource of our own TenantCluster, applied under FieldOwner so conditions merge by type
	if err := r.Client.Status().Apply(ctx, ctrlruntimeclient.ApplyConfigurationFromUnstructured(apply),
		ctrlruntimeclient.FieldOwner(FieldOwner), ctrlruntimeclient.ForceOwnership); ctrlruntimeclient.IgnoreNotFound(err) != nil {
		return fmt.Errorf("failed to apply the status of TenantCluster %s: %w", tc.Name, err)
	}
	return nil
}

// statusApply returns the apply configuration of the owned part of the
// status of tc: status.namespace and the conditions of ownedConditions
// it has.
func statusApply(tc *infrav1alpha1.TenantCluster) (*unstructured.Unstructured, error) {
	owned := infrav1alpha1.TenantClusterStatus{Namespace: tc.Status.Namespace}
	for _, c := range tc.Status.Conditions {
		if slices.Contains(ownedConditions, c.Type) {
			owned.Conditions = append(owned.Conditions, c)
		}
	}
	status, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&owned)
	if err != nil {
		return nil, fmt.Errorf("failed to convert the status of TenantCluster %s: %w", tc.Name, err)
	}
	apply := &unstructured.Unstructured{Object: map[string]any{"status": status}}
	apply.SetGroupVersionKind(infrav1alpha1.GroupVersion.WithKind("TenantCluster"))
	apply.SetName(tc.Name)
	return apply, nil
}
