package vlan

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
)

// setStatus records out in the status of tc: the VLAN while one is
// claimed, and ConditionVLANReady.
func (r *Reconciler) setStatus(tc *infrav1alpha1.TenantCluster, out outcome) {
	tc.Status.VLAN = nil
	if out.id != 0 {
		tc.Status.VLAN = &infrav1alpha1.VLANStatus{ID: int32(out.id), NetworkAttachmentDefinition: r.Options.networkName()} //nolint:gosec // ids are at most 4094.
	}
	c := metav1.Condition{Type: infrav1alpha1.ConditionVLANReady, Status: metav1.ConditionFalse, Reason: out.reason, Message: out.message, ObservedGeneration: tc.Generation}
	if out.reason == infrav1alpha1.ReasonVLANAllocated {
		c.Status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&tc.Status.Conditions, c)
}

// announce records a Normal event when an id was claimed and a Warning
// event when ConditionVLANReady turned false or changed its reason while
// false since before.
func (r *Reconciler) announce(tc *infrav1alpha1.TenantCluster, before *infrav1alpha1.TenantClusterStatus, out outcome) {
	if r.Recorder == nil {
		return
	}
	if out.claimedNow {
		r.Recorder.Eventf(tc, nil, corev1.EventTypeNormal, infrav1alpha1.ReasonVLANAllocated, "ClaimVLAN", "claimed VLAN %d of range %s", out.id, r.Options.Range)
	}
	now := meta.FindStatusCondition(tc.Status.Conditions, infrav1alpha1.ConditionVLANReady)
	was := meta.FindStatusCondition(before.Conditions, infrav1alpha1.ConditionVLANReady)
	if now.Status == metav1.ConditionTrue || (was != nil && was.Status == now.Status && was.Reason == now.Reason) {
		return
	}
	r.Recorder.Eventf(tc, nil, corev1.EventTypeWarning, now.Reason, "ClaimVLAN", "%s: %s", infrav1alpha1.ConditionVLANReady, now.Message)
}

// writeStatus writes the status of tc when the VLAN or its condition
// changed. The TenantCluster controller writes the same status: on a
// conflict the TenantCluster is read again and only this controller's
// fields are set on it, so neither overwrites the other's.
func (r *Reconciler) writeStatus(ctx context.Context, tc *infrav1alpha1.TenantCluster, before *infrav1alpha1.TenantClusterStatus) error {
	if equality.Semantic.DeepEqual(before.VLAN, tc.Status.VLAN) && sameCondition(before, &tc.Status) {
		return nil
	}
	vlan := tc.Status.VLAN
	condition := meta.FindStatusCondition(tc.Status.Conditions, infrav1alpha1.ConditionVLANReady)
	latest := tc
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		//writepath:direct the status of our own TenantCluster, retried on conflict with only this controller's fields set
		err := r.Writer.Status().Update(ctx, latest)
		if !apierrors.IsConflict(err) {
			return err
		}
		fresh := &infrav1alpha1.TenantCluster{}
		if err := r.APIReader.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(tc), fresh); err != nil {
			return err
		}
		fresh.Status.VLAN = vlan
		meta.SetStatusCondition(&fresh.Status.Conditions, *condition)
		latest = fresh
		return err
	})
	if err != nil {
		return fmt.Errorf("failed to update the status of TenantCluster %s: %w", tc.Name, err)
	}
	return nil
}

// sameCondition compares ConditionVLANReady of two statuses, ignoring its
// transition time.
func sameCondition(a, b *infrav1alpha1.TenantClusterStatus) bool {
	x := meta.FindStatusCondition(a.Conditions, infrav1alpha1.ConditionVLANReady)
	y := meta.FindStatusCondition(b.Conditions, infrav1alpha1.ConditionVLANReady)
	if x == nil || y == nil {
		return x == y
	}
	return x.Status == y.Status && x.Reason == y.Reason && x.Message == y.Message && x.ObservedGeneration == y.ObservedGeneration
}
