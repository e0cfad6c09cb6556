package machinedeployment

import (
	"context"
	"fmt"
	"maps"

	"k8c.io/machine-controller/sdk/apis/cluster/common"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The SDK's MachineDeploymentStatus has no error fields (a MachineSet's
// status has errorReason and errorMessage), so a MachineDeployment the
// controller refuses carries the error in two annotations, removed by the
// first reconcile that finds the spec valid.
const (
	// AnnotationErrorReason holds ReasonInvalidConfiguration.
	AnnotationErrorReason = "machinedeployment.kkp-kubevirt.io/error-reason"
	// AnnotationErrorMessage holds what is wrong, with its field path.
	AnnotationErrorMessage = "machinedeployment.kkp-kubevirt.io/error-message"
)

// validate returns the selector and rollout limits of a defaulted
// MachineDeployment, or why the controller cannot work with it: another
// strategy type than RollingUpdate, an empty selector or one the template
// does not match, invalid maxSurge or maxUnavailable.
func validate(md *clusterv1alpha1.MachineDeployment) (labels.Selector, limits, error) {
	if t := md.Spec.Strategy.Type; t != common.RollingUpdateMachineDeploymentStrategyType {
		return nil, limits{}, fmt.Errorf("spec.strategy.type: unsupported value %q: only %s is", t, common.RollingUpdateMachineDeploymentStrategyType)
	}
	selector, err := selectorOf(md)
	if err != nil {
		return nil, limits{}, err
	}
	l, err := limitsOf(md)
	if err != nil {
		return nil, limits{}, err
	}
	return selector, l, nil
}

// refuse reports that md cannot be reconciled because of invalid: the
// error annotations and, when the message is new, a Warning event. It
// returns invalid as a terminal error: the MachineDeployment is looked at
// again when it changes.
func (r *reconciler) refuse(ctx context.Context, md *clusterv1alpha1.MachineDeployment, invalid error) error {
	base := md.DeepCopy()
	annotations := maps.Clone(md.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	r.noteError(md, annotations, invalid)
	if !maps.Equal(annotations, md.Annotations) {
		md.Annotations = annotations
		if err := r.client.Patch(ctx, md, ctrlruntimeclient.MergeFrom(base)); ctrlruntimeclient.IgnoreNotFound(err) != nil {
			return fmt.Errorf("failed to annotate MachineDeployment %s with its error: %w", md.Name, err)
		}
	}
	return reconcile.TerminalError(invalid)
}

// noteError writes invalid into the error annotations of annotations (a
// copy of md's), removing them when invalid is nil, and records a Warning
// event on md when the message is new.
func (r *reconciler) noteError(md *clusterv1alpha1.MachineDeployment, annotations map[string]string, invalid error) {
	if invalid == nil {
		delete(annotations, AnnotationErrorReason)
		delete(annotations, AnnotationErrorMessage)
		return
	}
	message := invalid.Error()
	if md.Annotations[AnnotationErrorMessage] != message {
		r.recorder.Eventf(md, nil, corev1.EventTypeWarning, ReasonInvalidConfiguration, "Reconcile",
			"MachineDeployment %s: %s", md.Name, message)
	}
	annotations[AnnotationErrorReason] = ReasonInvalidConfiguration
	annotations[AnnotationErrorMessage] = message
}
