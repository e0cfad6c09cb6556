package tenantcluster

import (
	"errors"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
)

// summarized are the conditions ConditionReady summarizes, in the order a
// TenantCluster comes up.
var summarized = []string{
	infrav1alpha1.ConditionNamespaceReady,
	infrav1alpha1.ConditionKubeconfigReady,
	infrav1alpha1.ConditionConfigReady,
}

// ownedConditions are the condition types this controller writes. The
// VLAN controller writes ConditionVLANReady and status.vlan of the same
// status; the status patch leaves those alone.
var ownedConditions = slices.Concat(summarized, []string{infrav1alpha1.ConditionReady, infrav1alpha1.ConditionDeleting})

// observation is what the phases of one reconcile of a TenantCluster that
// is not being deleted found. The status is computed from it alone.
type observation struct {
	// namespace is the name of the TenantCluster's namespace.
	namespace string
	// namespaceErr tells why the namespace is not in place; nil when it is.
	namespaceErr error
	// kubeconfig is the state of the tenant kubeconfig; nil when it was
	// not checked because the namespace is not in place.
	kubeconfig *kubeconfigState
	// config is the outcome of writing the spec's lists; nil when they
	// were not written because the namespace is not in place.
	config *configState
}

// err joins the failures of the phases that are worth a retry with
// backoff.
func (o observation) err() error {
	errs := []error{o.namespaceErr}
	if o.kubeconfig != nil {
		errs = append(errs, o.kubeconfig.err)
	}
	if o.config != nil {
		errs = append(errs, o.config.failed)
	}
	return errors.Join(errs...)
}

// result is what the reconcile returns: the error of a failed phase, or
// when to look again at a TenantCluster whose kubeconfig is or is not
// usable.
func (o observation) result() (reconcile.Result, error) {
	if err := o.err(); err != nil {
		return reconcile.Result{}, err
	}
	if o.kubeconfig == nil || !o.kubeconfig.ready() {
		return reconcile.Result{RequeueAfter: notReadyRecheck}, nil
	}
	return reconcile.Result{RequeueAfter: readyRecheck}, nil
}

// setStatus computes the status of tc from what the phases found:
// status.namespace, the condition of each phase that ran and
// ConditionReady. The condition of a phase that did not run keeps what an
// earlier reconcile found.
func setStatus(tc *infrav1alpha1.TenantCluster, found observation) {
	tc.Status.Namespace = found.namespace
	setCondition(tc, infrav1alpha1.ConditionNamespaceReady, found.namespaceErr, infrav1alpha1.ReasonCreated, "namespace "+found.namespace+" exists")
	if found.kubeconfig != nil {
		setStatusCondition(tc, found.kubeconfig.condition(tc.Generation))
	}
	if found.config != nil {
		setStatusCondition(tc, found.config.condition(tc.Generation))
	}
	setReady(tc)
}

// setDeleting sets ConditionDeleting from the deletion step a
// TenantCluster waits for, with the message of err when the step failed.
func setDeleting(tc *infrav1alpha1.TenantCluster, s step, err error) {
	c := metav1.Condition{Type: infrav1alpha1.ConditionDeleting, Status: metav1.ConditionTrue, Reason: s.reason, Message: s.message, ObservedGeneration: tc.Generation}
	if err != nil {
		c.Message = err.Error()
	}
	setStatusCondition(tc, c)
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

// setCondition sets condition typ to true when err is nil, else to false
// with err's message.
func setCondition(tc *infrav1alpha1.TenantCluster, typ string, err error, reason, message string) {
	c := metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, Message: message, ObservedGeneration: tc.Generation}
	if err != nil {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1alpha1.ReasonFailed, err.Error()
	}
	setStatusCondition(tc, c)
}

// setStatusCondition sets c in the status of tc.
func setStatusCondition(tc *infrav1alpha1.TenantCluster, c metav1.Condition) {
	meta.SetStatusCondition(&tc.Status.Conditions, c)
}

// equalStatus compares two statuses ignoring condition transition times,
// which SetStatusCondition keeps when the status does not change.
func equalStatus(a, b *infrav1alpha1.TenantClusterStatus) bool {
	if a.Namespace != b.Namespace || len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for i := range a.Conditions {
		x, y := a.Conditions[i], b.Conditions[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message || x.ObservedGeneration != y.ObservedGeneration {
			return false
		}
	}
	return true
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
		r.Recorder.Eventf(tc, nil, corev1.EventTypeWarning, now.Reason, actionReconcile, "%s: %s", typ, now.Message)
	}
	if meta.IsStatusConditionTrue(tc.Status.Conditions, infrav1alpha1.ConditionReady) &&
		!meta.IsStatusConditionTrue(before.Conditions, infrav1alpha1.ConditionReady) {
		r.Recorder.Eventf(tc, nil, corev1.EventTypeNormal, infrav1alpha1.ReasonReady, actionReconcile, "namespace %s, the tenant kubeconfig and the configuration are in place", tc.Status.Namespace)
	}
}

// Actions of the events of a TenantCluster.
const (
	actionReconcile = "Reconcile"
	actionDelete    = "Delete"
)

// warn records a Warning event for a failed deletion step.
func (r *Reconciler) warn(tc *infrav1alpha1.TenantCluster, reason string, err error) {
	if r.Recorder == nil {
		return
	}
	r.Recorder.Eventf(tc, nil, corev1.EventTypeWarning, reason, actionDelete, "%v", err)
}
