package machine

import (
	"context"
	"fmt"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultStoppedGrace is how long an instance may stay stopped before its
// Machine is replaced, when Options.StoppedGrace is 0.
const DefaultStoppedGrace = 5 * time.Minute

// AnnotationDownSince on a Machine records since when its instance is
// down (RFC 3339), so that a restarted controller keeps counting the grace
// period instead of granting a new one. It is removed once the instance
// runs again.
const AnnotationDownSince = "kkp-kubevirt.io/instance-down-since"

// downSince records whether the Machine's instance is down now and returns
// since when it is (the zero time when it is not). The time lives in
// AnnotationDownSince; an unreadable value starts a new period.
func (r *reconciler) downSince(ctx context.Context, machine *clusterv1alpha1.Machine, down bool, now time.Time) (time.Time, error) {
	raw, has := machine.Annotations[AnnotationDownSince]
	if !down {
		if has {
			return time.Time{}, r.setDownSince(ctx, machine, "")
		}
		return time.Time{}, nil
	}
	if since, err := time.Parse(time.RFC3339, raw); has && err == nil {
		return since, nil
	}
	return now.Truncate(time.Second), r.setDownSince(ctx, machine, now.UTC().Format(time.RFC3339))
}

// setDownSince sets AnnotationDownSince to value, or removes it for "".
func (r *reconciler) setDownSince(ctx context.Context, machine *clusterv1alpha1.Machine, value string) error {
	return r.patchMachine(ctx, machine, func(m *clusterv1alpha1.Machine) {
		if value == "" {
			delete(m.Annotations, AnnotationDownSince)
			return
		}
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[AnnotationDownSince] = value
	})
}

// instanceDown reports whether an instance that should run does not: it
// stopped or its state is unknown, or, once the Machine had a Node, it is
// starting again (its VMI ended and is gone) or its VMI is being deleted.
// KubeVirt deletes a failed VMI before it starts the next one, so a guest
// that crashes at every start passes through deleting at each restart: were
// that "not down", every restart would end the down period and a crash
// loop would never be replaced.
func instanceDown(s *scope, inst cloudprovider.Instance) bool {
	switch inst.Status() {
	case cloudprovider.StatusStopped, cloudprovider.StatusUnknown:
		return true
	case cloudprovider.StatusCreating, cloudprovider.StatusDeleting:
		return s.machine.Status.NodeRef != nil
	default:
		return false
	}
}

// checkStopped replaces the Machine of an instance that has been down for
// longer than the grace period: a Machine of a MachineSet is deleted (the
// MachineSet creates another), any other Machine gets a Warning event
// every grace period. It returns how long until the grace period ends (0
// when the instance runs or checks are disabled) and whether the Machine
// was deleted.
func (r *reconciler) checkStopped(ctx context.Context, s *scope, inst cloudprovider.Instance) (time.Duration, bool, error) {
	if r.stoppedGrace < 0 {
		return 0, false, nil
	}
	now := r.now()
	since, err := r.downSince(ctx, s.machine, instanceDown(s, inst), now)
	if err != nil || since.IsZero() {
		return 0, false, err
	}
	if left := since.Add(r.stoppedGrace).Sub(now); left > 0 {
		return left, false, nil
	}
	ref := metav1.GetControllerOf(s.machine)
	if ref == nil || ref.Kind != "MachineSet" {
		r.recorder.Eventf(s.machine, nil, corev1.EventTypeWarning, ReasonInstanceStopped, "Replace",
			"Instance %s is %s since %s; the Machine has no MachineSet to replace it", inst.Name(), inst.Status(), since.UTC().Format(time.RFC3339))
		// A new period: the warning repeats once per grace period.
		return r.stoppedGrace, false, r.setDownSince(ctx, s.machine, now.UTC().Format(time.RFC3339))
	}
	r.recorder.Eventf(s.machine, nil, corev1.EventTypeWarning, ReasonInstanceStopped, "Delete",
		"Instance %s is %s since %s; deleting the Machine so that MachineSet %s replaces it", inst.Name(), inst.Status(), since.UTC().Format(time.RFC3339), ref.Name)
	if err := r.client.Delete(ctx, s.machine); ctrlruntimeclient.IgnoreNotFound(err) != nil {
		return 0, false, fmt.Errorf("failed to delete the Machine of a stopped instance: %w", err)
	}
	return 0, true, nil
}

// earliest returns the shorter of two positive waits (0 means none).
func earliest(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	default:
		return min(a, b)
	}
}
