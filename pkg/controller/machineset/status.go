package machineset

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// machineState is what the status counts need to know of one Machine.
type machineState struct {
	machine *clusterv1alpha1.Machine
	// ready tells whether the Machine has a Ready Node.
	ready bool
	// readySince is when the Node became Ready (zero: long ago).
	readySince time.Time
}

// updateStatus computes the status from the owned Machines and their Nodes
// and patches it when it changed. It asks to be called again when a Machine
// becomes available only after minReadySeconds pass.
func (r *reconciler) updateStatus(ctx context.Context, ms *clusterv1alpha1.MachineSet, owned []*clusterv1alpha1.Machine) (reconcile.Result, error) {
	states := make([]machineState, 0, len(owned))
	node := &corev1.Node{}
	for _, m := range owned {
		state, err := r.stateOf(ctx, m, node)
		if err != nil {
			return reconcile.Result{}, err
		}
		states = append(states, state)
	}
	status, wait := computeStatus(ms, states, time.Now())
	if apiequality.Semantic.DeepEqual(status, ms.Status) {
		return reconcile.Result{RequeueAfter: wait}, nil
	}
	if err := r.patchStatus(ctx, ms, status); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: wait}, nil
}

// patchStatus sets ms's status to status with a JSON merge patch that
// always carries status.replicas: the CRD requires it and the SDK type
// omits it when 0, so a MachineSet without status could otherwise never get
// one of 0 replicas (and its MachineDeployment would wait for its
// observedGeneration forever).
func (r *reconciler) patchStatus(ctx context.Context, ms *clusterv1alpha1.MachineSet, status clusterv1alpha1.MachineSetStatus) error {
	base := ms.DeepCopy()
	ms.Status = status
	data, err := ctrlruntimeclient.MergeFrom(base).Data(ms)
	if err != nil {
		return fmt.Errorf("failed to compute the status patch of MachineSet %s: %w", ms.Name, err)
	}
	patch := map[string]any{}
	if err := json.Unmarshal(data, &patch); err != nil {
		return fmt.Errorf("failed to decode the status patch of MachineSet %s: %w", ms.Name, err)
	}
	fields, _ := patch["status"].(map[string]any)
	if fields == nil {
		fields = map[string]any{}
	}
	fields["replicas"] = status.Replicas
	patch["status"] = fields
	if data, err = json.Marshal(patch); err != nil {
		return fmt.Errorf("failed to encode the status patch of MachineSet %s: %w", ms.Name, err)
	}
	if err := r.client.Status().Patch(ctx, ms, ctrlruntimeclient.RawPatch(types.MergePatchType, data)); ctrlruntimeclient.IgnoreNotFound(err) != nil {
		return fmt.Errorf("failed to patch the status of MachineSet %s: %w", ms.Name, err)
	}
	return nil
}

// stateOf reads the Node of a Machine into node to tell whether it is
// Ready. The Node is only read, so it is neither copied out of the cache
// nor allocated per Machine: node is the caller's, and is overwritten by
// the next read. At 1000 replicas these copies were a seventh of what the
// controller allocated.
func (r *reconciler) stateOf(ctx context.Context, m *clusterv1alpha1.Machine, node *corev1.Node) (machineState, error) {
	state := machineState{machine: m}
	if m.Status.NodeRef == nil {
		return state, nil
	}
	if err := r.client.Get(ctx, ctrlruntimeclient.ObjectKey{Name: m.Status.NodeRef.Name}, node, ctrlruntimeclient.UnsafeDisableDeepCopy); err != nil {
		if apierrors.IsNotFound(err) {
			return state, nil
		}
		return state, fmt.Errorf("failed to get Node %s: %w", m.Status.NodeRef.Name, err)
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			state.ready, state.readySince = true, c.LastTransitionTime.Time
		}
	}
	return state, nil
}

// computeStatus clears the error fields and counts the Machines not being deleted: all of them
// (replicas), those carrying every template label (fullyLabeledReplicas),
// those with a Ready Node (readyReplicas) and those Ready for at least
// minReadySeconds (availableReplicas). wait is the time until the next
// Machine becomes available, zero when none is pending.
func computeStatus(ms *clusterv1alpha1.MachineSet, states []machineState, now time.Time) (clusterv1alpha1.MachineSetStatus, time.Duration) {
	status := ms.Status
	status.Replicas, status.FullyLabeledReplicas, status.ReadyReplicas, status.AvailableReplicas = 0, 0, 0, 0
	status.ObservedGeneration = ms.Generation
	// The spec was accepted: an error recorded by refuse is over.
	status.ErrorReason, status.ErrorMessage = nil, nil
	minReady := time.Duration(ms.Spec.MinReadySeconds) * time.Second
	var wait time.Duration
	for _, s := range states {
		if s.machine.DeletionTimestamp != nil {
			continue
		}
		status.Replicas++
		if hasLabels(s.machine.Labels, ms.Spec.Template.Labels) {
			status.FullyLabeledReplicas++
		}
		if !s.ready {
			continue
		}
		status.ReadyReplicas++
		if left := s.readySince.Add(minReady).Sub(now); minReady > 0 && left > 0 {
			if wait == 0 || left < wait {
				wait = left
			}
			continue
		}
		status.AvailableReplicas++
	}
	return status, wait
}

// hasLabels reports whether have carries every entry of want.
func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}
