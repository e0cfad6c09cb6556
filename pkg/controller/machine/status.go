package machine

import (
	"errors"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"

	"k8c.io/machine-controller/sdk/apis/cluster/common"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// reasonedError is a TerminalError whose reason the controller chose for
// the operation that failed; it still unwraps to the provider's error.
type reasonedError struct {
	reason common.MachineStatusError
	err    error
}

func (e *reasonedError) Error() string { return e.err.Error() }
func (e *reasonedError) Unwrap() error { return e.err }

// withReason tags a terminal provider error with the operation's reason;
// other errors are returned unchanged. An InvalidConfiguration error keeps
// its reason: it says more than the operation.
func withReason(err error, reason common.MachineStatusError) error {
	t, ok := cloudprovider.IsTerminal(err)
	if !ok || t.Reason == common.InvalidConfigurationMachineError || t.Reason == "" {
		return err
	}
	return &reasonedError{reason: reason, err: err}
}

// terminalReason returns the reason and message of a terminal error.
func terminalReason(err error) (common.MachineStatusError, string, bool) {
	t, ok := cloudprovider.IsTerminal(err)
	if !ok {
		return "", "", false
	}
	reason := t.Reason
	if re := (*reasonedError)(nil); errors.As(err, &re) {
		reason = re.reason
	}
	return reason, t.Message, true
}

// setError records a terminal error on the Machine's status.
func setError(machine *clusterv1alpha1.Machine, reason common.MachineStatusError, message string) {
	machine.Status.ErrorReason = ptr.To(reason)
	machine.Status.ErrorMessage = ptr.To(message)
}

// clearError removes a recorded error once the Machine reconciles fine.
func clearError(machine *clusterv1alpha1.Machine) {
	machine.Status.ErrorReason = nil
	machine.Status.ErrorMessage = nil
}

// handleError turns a reconcile error into the Machine's status and a
// Warning event. Terminal errors are shown on the Machine; like every other
// error they are retried with the controller's backoff, since what makes a
// spec invalid may live outside the Machine (a StorageClass, a Secret).
func (r *reconciler) handleError(s *scope, res reconcile.Result, err error) (reconcile.Result, error) {
	if err == nil {
		return res, nil
	}
	if reason, message, ok := terminalReason(err); ok {
		setError(s.machine, reason, message)
		r.recorder.Eventf(s.machine, nil, corev1.EventTypeWarning, string(reason), "Reconcile", "%s", message)
		s.log.Infow("Terminal error", "reason", reason, "message", message)
		return reconcile.Result{}, err
	}
	r.recorder.Eventf(s.machine, nil, corev1.EventTypeWarning, ReasonReconcilingError, "Reconcile", "%v", err)
	return reconcile.Result{}, err
}

// joinErr joins two errors, keeping a terminal first error terminal.
func joinErr(first, second error) error {
	if first == nil {
		return second
	}
	return errors.Join(first, second)
}
