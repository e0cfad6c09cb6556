package machine

import (
	"context"
	"sync/atomic"

	"go.uber.org/zap"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// statusWrites writes Machine statuses to the status subresource while the
// Machine CRD serves one, as this repository's CRD does, and as part of
// the Machine itself while it does not, as Kubermatic's own Machine CRD
// does not: there a patch of the Machine carries its status. The writer
// learns which from the answers, so nothing else asks the API server and
// each change of the CRD costs one request more:
//   - The API server answers a status write to a CRD without the
//     subresource as it answers one for a Machine that is gone: not found.
//     The status is then sent as a patch of the Machine. If that keeps the
//     status, the subresource is not served, and later statuses go the
//     same way; a Machine that is gone is not found again.
//   - Kubermatic's ClusterRole for machine-controller grants no
//     machines/status (its CRD has no such subresource), so there the API
//     server refuses a status write as forbidden. That too sends the
//     status as a patch of the Machine, which the role grants.
//   - A patch of the Machine whose answer lacks the status it carried was
//     stripped of it, which the API server does once the CRD serves the
//     subresource again: the status is sent to the subresource, and so
//     are later ones.
//
// The zero value starts with the subresource.
type statusWrites struct {
	onMachine atomic.Bool
}

// patch writes machine's status, base being the Machine with its stored
// status, and leaves the stored Machine in machine. log hears of each
// switch.
func (w *statusWrites) patch(ctx context.Context, log *zap.SugaredLogger, c ctrlruntimeclient.Client, machine, base *clusterv1alpha1.Machine) error {
	want := machine.Status.DeepCopy()
	if w.onMachine.Load() {
		if kept, err := patchWithMachine(ctx, c, machine, base, want); err != nil || kept {
			return err
		}
		if w.onMachine.CompareAndSwap(true, false) {
			log.Info("The Machine CRD serves the status subresource again: writing Machine statuses there")
		}
		machine.Status = *want
	}
	refused := c.Status().Patch(ctx, machine, ctrlruntimeclient.MergeFrom(base))
	forbidden := apierrors.IsForbidden(refused)
	if !apierrors.IsNotFound(refused) && !forbidden {
		return refused
	}
	kept, err := patchWithMachine(ctx, c, machine, base, want)
	if err != nil {
		return err
	}
	if !kept {
		// The status subresource is served after all: this Machine was
		// gone a moment ago and is another one now, or the controller
		// may not write it (then the error says so).
		return refused
	}
	if w.onMachine.CompareAndSwap(false, true) {
		if forbidden {
			log.Info("Writing Machine statuses with the Machine: the user cluster grants no machines/status (as Kubermatic's ClusterRole for machine-controller) and the Machine CRD serves no status subresource")
		} else {
			log.Info("The Machine CRD serves no status subresource (as Kubermatic's own CRD): writing Machine statuses with the Machine")
		}
	}
	return nil
}

// patchWithMachine sends the status want as part of a patch of the whole
// Machine and reports whether the answer kept it: an API server that serves
// the status subresource strips it.
func patchWithMachine(ctx context.Context, c ctrlruntimeclient.Client, machine, base *clusterv1alpha1.Machine, want *clusterv1alpha1.MachineStatus) (kept bool, err error) {
	if err := c.Patch(ctx, machine, ctrlruntimeclient.MergeFrom(base)); err != nil {
		return false, err
	}
	return apiequality.Semantic.DeepEqual(want, &machine.Status), nil
}
