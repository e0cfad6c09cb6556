package tenantcluster

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
)

// summarized are the conditions ConditionReady summarizes, in the order a
// TenantCluster comes up.
var summarized = []string{
	infrav1alpha1.ConditionNamespaceReady,
	infrav1alpha1.ConditionKubeconfigReady,
	infrav1alpha1.ConditionConfigReady,
}

// setReady sets ConditionReady from the conditions it summarizes: the
// reason and message of the first that is not true (or not yet set).
func setReady(tc *infrav1alpha1.TenantCluster) {
	ready := metav1.Condition{Type: infrav1alpha1.ConditionReady, Status: metav1.ConditionTrue, ObservedGeneration: tc.Generation,
		Reason: infrav1alpha1.ReasonReady, Message: "the namespace, the tenant kubeconfig and the configuration are in place"}
	for _, typ := range summarized {
		c := meta.FindStatusCondition(tc.Status.Conditions, typ)
		if c == nil {
			ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, infrav1alpha1.ReasonFailed, typ+" is not known yet"
			break
		}
		if c.Status != metav1.ConditionTrue {
			ready.Status, ready.Reason, ready.Message = metav1.ConditionFalse, c.Reason, typ+": "+c.Message
			break
		}
	}
	setStatusCondition(tc, ready)
}

// announce records a Warning event for each summarized condition that
// turned false or changed its reason while false since before, and a
// Normal event when the TenantCluster became ready.
func (r *Reconciler) announce(tc *infrav1alpha1.TenantCluster, before *infrav1alpha1.TenantClusterStatus) {
	if r.Recorder == nil {
		return
	}
	for _, typ := range summarized {
		now, was := meta.FindStatusCondition(tc.Status.Conditions, typ), meta.FindStatusCondition(before.Conditions, typ)
		if now == nil || now.Status == metav1.ConditionTrue {
			continue
		}
		if was != nil && was.Status == now.Status && was.Reason == now.Reason && was.Message == now.Message {
			continue
		}
		r.Recorder.Eventf(tc, nil, corev1.EventTypeWarning, now.Reason, "Reconcile", "%s: %s", typ, now.Message)
	}
	if meta.IsStatusConditionTrue(tc.Status.Conditions, infrav1alpha1.ConditionReady) &&
		!meta.IsStatusConditionTrue(before.Conditions, infrav1alpha1.ConditionReady) {
		r.Recorder.Eventf(tc, nil, corev1.EventTypeNormal, infrav1alpha1.ReasonReady, "Reconcile", "namespace %s, the tenant kubeconfig and the configuration are in place", tc.Status.Namespace)
	}
}

// warn records a Warning event for a failed deletion step.
func (r *Reconciler) warn(tc *infrav1alpha1.TenantCluster, reason string, err error) {
	if r.Recorder == nil {
		return
	}
	r.Recorder.Eventf(tc, nil, corev1.EventTypeWarning, reason, "Delete", "%v", err)
}
