package machinedeployment

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"time"

	"k8c.io/machine-controller/sdk/apis/cluster/common"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The SDK's MachineDeploymentStatus has no conditions, so the state of
// the Progressing condition of a Kubernetes Deployment is kept in two
// annotations of the MachineDeployment.
const (
	// AnnotationProgress holds the progress reason: one of the Reason
	// constants.
	AnnotationProgress = "machinedeployment.clusters.k8s.io/progress"
	// AnnotationProgressTime holds when the rollout last made progress
	// (RFC 3339); the progress deadline counts from it.
	AnnotationProgressTime = "machinedeployment.clusters.k8s.io/progress-time"
)

// computeStatus sums the MachineSets' counts: replicas, ready and
// available ones over all of them, updated ones of the new one.
func computeStatus(md *clusterv1alpha1.MachineDeployment, newSet *clusterv1alpha1.MachineSet, olds []*clusterv1alpha1.MachineSet) clusterv1alpha1.MachineDeploymentStatus {
	status := clusterv1alpha1.MachineDeploymentStatus{ObservedGeneration: md.Generation}
	sets := olds
	if newSet != nil {
		sets = append(sets[:len(sets):len(sets)], newSet)
		status.UpdatedReplicas = newSet.Status.Replicas
	}
	for _, ms := range sets {
		status.Replicas += ms.Status.Replicas
		status.ReadyReplicas += ms.Status.ReadyReplicas
		status.AvailableReplicas += ms.Status.AvailableReplicas
	}
	status.UnavailableReplicas = max(replicasOf(md)-status.AvailableReplicas, 0)
	return status
}

// progress is the state of the Progressing condition.
type progress struct {
	reason string
	since  time.Time
}

// progressOf reads the progress annotations.
func progressOf(md *clusterv1alpha1.MachineDeployment) progress {
	p := progress{reason: md.Annotations[AnnotationProgress]}
	p.since, _ = time.Parse(time.RFC3339, md.Annotations[AnnotationProgressTime])
	return p
}

// progressed tells whether the rollout moved forward from before to
// after: more updated, ready or available replicas, or fewer old ones.
func progressed(before, after clusterv1alpha1.MachineDeploymentStatus) bool {
	return after.UpdatedReplicas > before.UpdatedReplicas || after.ReadyReplicas > before.ReadyReplicas ||
		after.AvailableReplicas > before.AvailableReplicas ||
		after.Replicas-after.UpdatedReplicas < before.Replicas-before.UpdatedReplicas
}

// nextProgress returns the progress state after a reconcile and, while a
// rollout runs under a deadline, when the deadline passes.
func nextProgress(md *clusterv1alpha1.MachineDeployment, prev progress, before, after clusterv1alpha1.MachineDeploymentStatus, created, done bool, now time.Time) (progress, time.Duration) {
	set := func(reason string) progress {
		if prev.reason == reason && !prev.since.IsZero() {
			return prev
		}
		return progress{reason: reason, since: now}
	}
	switch {
	case md.Spec.Paused:
		return set(ReasonPaused), 0
	case done:
		return set(ReasonNewMachineSetAvailable), 0
	case created:
		return progress{reason: ReasonNewMachineSetCreated, since: now}, deadlineIn(md, now, now)
	case progressed(before, after) && prev.reason == ReasonMachineSetUpdated && !prev.since.IsZero() &&
		now.Sub(prev.since) < progressResolution(md):
		// Recorded recently enough: rewriting the time at every step of
		// the rollout would patch the MachineDeployment once per Machine.
		return prev, deadlineIn(md, prev.since, now)
	case progressed(before, after), prev.since.IsZero(),
		prev.reason == ReasonPaused, prev.reason == ReasonNewMachineSetAvailable:
		return progress{reason: ReasonMachineSetUpdated, since: now}, deadlineIn(md, now, now)
	}
	if prev.reason == ReasonProgressDeadlineExceeded {
		return prev, 0
	}
	if md.Spec.ProgressDeadlineSeconds != nil && deadlineIn(md, prev.since, now) <= 0 {
		return progress{reason: ReasonProgressDeadlineExceeded, since: prev.since}, 0
	}
	return prev, deadlineIn(md, prev.since, now)
}

// progressResolution is how old the recorded progress time gets before
// progress records it anew: a tenth of the deadline, between 1 s and
// 1 min. The recorded time thus precedes the last progress by less than
// this.
func progressResolution(md *clusterv1alpha1.MachineDeployment) time.Duration {
	d := time.Duration(ptr.Deref(md.Spec.ProgressDeadlineSeconds, 0)) * time.Second / 10
	return min(max(d, time.Second), time.Minute)
}

// deadlineIn returns how long after now the progress deadline counted
// from since passes; 0 without a deadline, at least a second otherwise
// while it has not passed. It counts the deadline plus the progress
// resolution from since, the recorded progress time, so it passes no
// earlier than the deadline after the last progress and less than the
// resolution later.
func deadlineIn(md *clusterv1alpha1.MachineDeployment, since, now time.Time) time.Duration {
	if md.Spec.ProgressDeadlineSeconds == nil {
		return 0
	}
	left := since.Add(time.Duration(*md.Spec.ProgressDeadlineSeconds)*time.Second + progressResolution(md)).Sub(now)
	if left <= 0 {
		return left
	}
	return max(left, time.Second)
}

// updateStatus writes the status counts and the revision, progress,
// error (invalid: see noteError) and capacity annotations when they
// changed. It asks to be called again when the progress deadline passes.
func (r *reconciler) updateStatus(ctx context.Context, md *clusterv1alpha1.MachineDeployment, newSet *clusterv1alpha1.MachineSet,
	olds []*clusterv1alpha1.MachineSet, created bool, invalid error,
) (reconcile.Result, error) {
	status := computeStatus(md, newSet, olds)
	prev := progressOf(md)
	next, wait := nextProgress(md, prev, md.Status, status, created, complete(md, newSet, olds), r.now())
	if next.reason == ReasonProgressDeadlineExceeded && prev.reason != next.reason {
		r.recorder.Eventf(md, nil, corev1.EventTypeWarning, ReasonProgressDeadlineExceeded, "Rollout",
			"MachineDeployment %s made no progress for %ds", md.Name, ptr.Deref(md.Spec.ProgressDeadlineSeconds, 0))
	}
	base := md.DeepCopy()
	annotations := maps.Clone(md.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	if newSet != nil {
		annotations[common.RevisionAnnotation] = strconv.FormatInt(revisionOf(newSet.Annotations), 10)
	}
	annotations[AnnotationProgress] = next.reason
	r.noteError(md, annotations, invalid)
	r.noteCapacity(ctx, md, annotations)
	annotations[AnnotationProgressTime] = next.since.UTC().Format(time.RFC3339)
	if !maps.Equal(annotations, md.Annotations) {
		md.Annotations = annotations
		if err := r.client.Patch(ctx, md, ctrlruntimeclient.MergeFrom(base)); ctrlruntimeclient.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, fmt.Errorf("failed to annotate MachineDeployment %s: %w", md.Name, err)
		}
		base = md.DeepCopy()
	}
	if !apiequality.Semantic.DeepEqual(status, md.Status) {
		md.Status = status
		if err := r.client.Status().Patch(ctx, md, ctrlruntimeclient.MergeFrom(base)); ctrlruntimeclient.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, fmt.Errorf("failed to patch the status of MachineDeployment %s: %w", md.Name, err)
		}
	}
	return reconcile.Result{RequeueAfter: max(wait, 0)}, nil
}
