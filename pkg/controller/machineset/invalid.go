package machineset

import (
	"context"

	"k8c.io/machine-controller/sdk/apis/cluster/common"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ReasonInvalidConfiguration is the status.errorReason of a MachineSet
// whose spec the controller refuses, and the reason of the Warning event
// recorded when the error appears or its message changes.
const ReasonInvalidConfiguration = string(common.InvalidConfigurationMachineSetError)

// refuse reports that ms cannot be reconciled because of invalid:
// status.errorReason and errorMessage and, when the message is new, a
// Warning event. It returns invalid as a terminal error: the MachineSet is
// looked at again when it changes. The first reconcile that finds the spec
// valid clears both fields (computeStatus).
func (r *reconciler) refuse(ctx context.Context, ms *clusterv1alpha1.MachineSet, invalid error) error {
	message := invalid.Error()
	if ptr.Deref(ms.Status.ErrorMessage, "") != message {
		r.recorder.Eventf(ms, nil, corev1.EventTypeWarning, ReasonInvalidConfiguration, "Reconcile", "MachineSet %s: %s", ms.Name, message)
	}
	if ptr.Deref(ms.Status.ErrorMessage, "") != message || ms.Status.ErrorReason == nil || string(*ms.Status.ErrorReason) != ReasonInvalidConfiguration {
		status := ms.Status
		status.ErrorReason = ptr.To(common.InvalidConfigurationMachineSetError)
		status.ErrorMessage = ptr.To(message)
		status.ObservedGeneration = ms.Generation
		if err := r.patchStatus(ctx, ms, status); err != nil {
			return err
		}
	}
	return reconcile.TerminalError(invalid)
}
