package machine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultStoppedGrace is how long an instance may stay stopped before its
// Machine is replaced, when Options.StoppedGrace is 0.
const DefaultStoppedGrace = 5 * time.Minute

// downTracker remembers since when the instance of a Machine is down. It
// lives in memory: a restarted controller grants a new grace period.
type downTracker struct {
	mu    sync.Mutex
	since map[types.UID]time.Time
}

// observe records whether the Machine's instance is down now and returns
// since when it is (the zero time when it is not).
func (d *downTracker) observe(uid types.UID, down bool, now time.Time) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !down {
		delete(d.since, uid)
		return time.Time{}
	}
	if d.since == nil {
		d.since = map[types.UID]time.Time{}
	}
	since, ok := d.since[uid]
	if !ok {
		since = now
		d.since[uid] = since
	}
	return since
}

// forget drops what is known of a Machine.
func (d *downTracker) forget(uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.since, uid)
}

// instanceDown reports whether an instance that should run does not: it
// stopped or its state is unknown, or it is starting again although the
// Machine already had a Node (its VMI ended and is gone).
func instanceDown(s *scope, inst cloudprovider.Instance) bool {
	switch inst.Status() {
	case cloudprovider.StatusStopped, cloudprovider.StatusUnknown:
		return true
	case cloudprovider.StatusCreating:
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
	since := r.down.observe(s.machine.UID, instanceDown(s, inst), now)
	if since.IsZero() {
		return 0, false, nil
	}
	if left := since.Add(r.stoppedGrace).Sub(now); left > 0 {
		return left, false, nil
	}
	ref := metav1.GetControllerOf(s.machine)
	if ref == nil || ref.Kind != "MachineSet" {
		r.recorder.Eventf(s.machine, nil, corev1.EventTypeWarning, "InstanceStopped", "Replace",
			"Instance %s is %s since %s; the Machine has no MachineSet to replace it", inst.Name(), inst.Status(), since.UTC().Format(time.RFC3339))
		r.down.forget(s.machine.UID)
		return r.stoppedGrace, false, nil
	}
	r.recorder.Eventf(s.machine, nil, corev1.EventTypeWarning, "InstanceStopped", "Delete",
		"Instance %s is %s since %s; deleting the Machine so that MachineSet %s replaces it", inst.Name(), inst.Status(), since.UTC().Format(time.RFC3339), ref.Name)
	if err := r.client.Delete(ctx, s.machine); ctrlruntimeclient.IgnoreNotFound(err) != nil {
		return 0, false, fmt.Errorf("failed to delete the Machine of a stopped instance: %w", err)
	}
	r.down.forget(s.machine.UID)
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
