package machinedeployment

import (
	"context"
	"fmt"
	"maps"
	"slices"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// rollout moves the MachineDeployment one step towards its template: it
// creates the new MachineSet if there is none, scales it up within the
// surge, and scales the old ones down as far as availability allows. It
// returns the new MachineSet and whether it was just created.
func (r *reconciler) rollout(ctx context.Context, md *clusterv1alpha1.MachineDeployment, newSet *clusterv1alpha1.MachineSet,
	olds []*clusterv1alpha1.MachineSet, l limits,
) (*clusterv1alpha1.MachineSet, bool, error) {
	desired := replicasOf(md)
	total := totalReplicas(olds)
	revision := maxRevision(olds) + 1
	if newSet == nil {
		ms, err := r.createSet(ctx, md, newSetReplicas(desired, total, 0, l), revision, l)
		return ms, err == nil, err
	}
	current := ptr.Deref(newSet.Spec.Replicas, 1)
	total += current
	if revisionOf(newSet.Annotations) >= revision {
		revision = revisionOf(newSet.Annotations)
	}
	want := newSetReplicas(desired, total, current, l)
	if err := r.updateSet(ctx, md, newSet, want, revision, l); err != nil {
		return newSet, false, err
	}
	if want > current {
		// Wait for the new Machines before taking old ones away.
		return newSet, false, nil
	}
	states := make([]setState, len(olds))
	for i, ms := range olds {
		states[i] = stateOf(ms)
	}
	targets := oldSetReplicas(desired, l, stateOf(newSet), states)
	for i, ms := range olds {
		if targets[i] == states[i].replicas {
			continue
		}
		if err := r.updateSet(ctx, md, ms, targets[i], revisionOf(ms.Annotations), l); err != nil {
			return newSet, false, err
		}
	}
	return newSet, false, nil
}

// scalePaused brings the replicas of a paused MachineDeployment's
// MachineSets to the desired total without rolling: Machines are added to
// the new MachineSet (else the newest old one) and taken from the oldest
// MachineSets first.
func (r *reconciler) scalePaused(ctx context.Context, md *clusterv1alpha1.MachineDeployment, newSet *clusterv1alpha1.MachineSet,
	olds []*clusterv1alpha1.MachineSet, l limits,
) error {
	sets := slices.Clone(olds)
	if newSet != nil {
		sets = append(sets, newSet)
	}
	if len(sets) == 0 {
		return nil
	}
	current := make([]int32, len(sets))
	for i, ms := range sets {
		current[i] = ptr.Deref(ms.Spec.Replicas, 1)
	}
	targets := pausedReplicas(replicasOf(md), current)
	for i, ms := range sets {
		if targets[i] == current[i] {
			continue
		}
		if err := r.updateSet(ctx, md, ms, targets[i], revisionOf(ms.Annotations), l); err != nil {
			return err
		}
	}
	return nil
}

// pausedReplicas returns the replicas of MachineSets (oldest first, the
// one to grow last) so they add up to desired: a missing difference goes
// to the last one, a surplus is taken from the first ones.
func pausedReplicas(desired int32, current []int32) []int32 {
	out := slices.Clone(current)
	var total int32
	for _, n := range current {
		total += n
	}
	diff := desired - total
	if diff > 0 && len(out) > 0 {
		out[len(out)-1] += diff
	}
	for i := range out {
		if diff >= 0 {
			break
		}
		n := min(out[i], -diff)
		out[i] -= n
		diff += n
	}
	return out
}

// createSet creates the MachineSet of the MachineDeployment's template.
func (r *reconciler) createSet(ctx context.Context, md *clusterv1alpha1.MachineDeployment, replicas int32, revision int64, l limits) (*clusterv1alpha1.MachineSet, error) {
	hash, err := templateHash(&md.Spec.Template)
	if err != nil {
		return nil, err
	}
	template := md.Spec.Template.DeepCopy()
	template.Labels = withLabel(template.Labels, LabelTemplateHash, hash)
	selector := md.Spec.Selector.DeepCopy()
	selector.MatchLabels = withLabel(selector.MatchLabels, LabelTemplateHash, hash)
	ms := &clusterv1alpha1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{
			Name:            md.Name + "-" + hash,
			Namespace:       md.Namespace,
			Labels:          withLabel(md.Spec.Template.Labels, LabelTemplateHash, hash),
			Annotations:     map[string]string{},
			OwnerReferences: []metav1.OwnerReference{controllerRef(md)},
		},
		Spec: clusterv1alpha1.MachineSetSpec{
			Replicas:        ptr.To(replicas),
			MinReadySeconds: ptr.Deref(md.Spec.MinReadySeconds, 0),
			Selector:        *selector,
			Template:        *template,
		},
	}
	setRevision(ms.Annotations, revision)
	setReplicaAnnotations(ms.Annotations, replicasOf(md), replicasOf(md)+l.surge)
	key := types.NamespacedName{Namespace: md.Namespace, Name: md.Name}
	if err := r.client.Create(ctx, ms); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("failed to create MachineSet %s: a MachineSet of that name exists and is not this template's: %w", ms.Name, err)
		}
		r.recorder.Eventf(md, nil, corev1.EventTypeWarning, ReasonFailedCreate, "CreateMachineSet", "Failed to create MachineSet %s: %v", ms.Name, err)
		return nil, fmt.Errorf("failed to create MachineSet %s: %w", ms.Name, err)
	}
	r.pending.created(key, ms.Name)
	r.recorder.Eventf(md, ms, corev1.EventTypeNormal, ReasonSuccessfulCreate, "CreateMachineSet", "Created MachineSet %s with %d replicas", ms.Name, replicas)
	return ms, nil
}

// updateSet patches a MachineSet's replicas, revision, replica
// annotations and minReadySeconds when they differ.
func (r *reconciler) updateSet(ctx context.Context, md *clusterv1alpha1.MachineDeployment, ms *clusterv1alpha1.MachineSet, replicas int32, revision int64, l limits) error {
	base := ms.DeepCopy()
	if ms.Annotations == nil {
		ms.Annotations = map[string]string{}
	}
	changed := setReplicaAnnotations(ms.Annotations, replicasOf(md), replicasOf(md)+l.surge)
	if revision > 0 && setRevision(ms.Annotations, revision) {
		changed = true
	}
	before := ptr.Deref(ms.Spec.Replicas, 1)
	if before != replicas || ms.Spec.MinReadySeconds != ptr.Deref(md.Spec.MinReadySeconds, 0) {
		ms.Spec.Replicas = ptr.To(replicas)
		ms.Spec.MinReadySeconds = ptr.Deref(md.Spec.MinReadySeconds, 0)
		changed = true
	}
	if !changed {
		return nil
	}
	if err := r.client.Patch(ctx, ms, ctrlruntimeclient.MergeFromWithOptions(base, ctrlruntimeclient.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("failed to update MachineSet %s: %w", ms.Name, err)
	}
	r.pending.patched(types.NamespacedName{Namespace: md.Namespace, Name: md.Name}, ms)
	if before != replicas {
		verb := "up"
		if replicas < before {
			verb = "down"
		}
		r.recorder.Eventf(md, ms, corev1.EventTypeNormal, ReasonScalingMachineSet, "ScaleMachineSet", "Scaled %s MachineSet %s from %d to %d", verb, ms.Name, before, replicas)
	}
	return nil
}

// prune deletes the old MachineSets without replicas beyond
// revisionHistoryLimit (default 1), lowest revision first.
func (r *reconciler) prune(ctx context.Context, md *clusterv1alpha1.MachineDeployment, olds []*clusterv1alpha1.MachineSet) error {
	limit := int(max(ptr.Deref(md.Spec.RevisionHistoryLimit, 1), 0))
	var idle []*clusterv1alpha1.MachineSet
	for _, ms := range olds {
		if ms.DeletionTimestamp == nil && ptr.Deref(ms.Spec.Replicas, 1) == 0 && ms.Status.Replicas == 0 {
			idle = append(idle, ms)
		}
	}
	for _, ms := range idle[:max(len(idle)-limit, 0)] {
		if err := r.client.Delete(ctx, ms); ctrlruntimeclient.IgnoreNotFound(err) != nil {
			return fmt.Errorf("failed to delete old MachineSet %s: %w", ms.Name, err)
		}
	}
	return nil
}

// totalReplicas sums the spec.replicas of MachineSets.
func totalReplicas(sets []*clusterv1alpha1.MachineSet) int32 {
	var n int32
	for _, ms := range sets {
		n += ptr.Deref(ms.Spec.Replicas, 1)
	}
	return n
}

// stateOf returns the rollout state of a MachineSet.
func stateOf(ms *clusterv1alpha1.MachineSet) setState {
	replicas := ptr.Deref(ms.Spec.Replicas, 1)
	return setState{replicas: replicas, available: min(ms.Status.AvailableReplicas, replicas)}
}

// withLabel returns a copy of labels with key set to value.
func withLabel(labels map[string]string, key, value string) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	out[key] = value
	return out
}
