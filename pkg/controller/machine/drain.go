package machine

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// Drain settings.
const (
	// DefaultDrainTimeout bounds how long a Machine's deletion waits for
	// the evictions of its Node's pods.
	DefaultDrainTimeout = 10 * time.Minute
	// AnnotationSkipEviction on a Node skips its drain (Kubermatic's key).
	AnnotationSkipEviction = "kubermatic.io/skip-eviction"
	// pollDrain is how often a drain is looked at: pod deletions on the
	// Node are not watched.
	pollDrain = 2 * time.Second
	// annotationMirrorPod marks static pods, which cannot be evicted.
	annotationMirrorPod = "kubernetes.io/config.mirror"
	// indexPodNodeName is the field pods are listed by.
	indexPodNodeName = "spec.nodeName"
)

// drainState is what one look at a Node's pods found.
type drainState struct {
	// pending counts pods still to go.
	pending int
	// blocked counts evictions refused, e.g. by a PodDisruptionBudget.
	blocked int
}

// drain requests the eviction of every pod on the Node that a drain
// removes (not DaemonSet or static pods, not finished ones) and reports
// what is still pending. Evictions honour PodDisruptionBudgets: a refused
// eviction is retried on the next look. A pod counts as gone once it is
// deleted or its grace period is over.
func drain(ctx context.Context, c ctrlruntimeclient.Client, pods ctrlruntimeclient.Reader, node *corev1.Node, now time.Time) (drainState, error) {
	list := &corev1.PodList{}
	if err := pods.List(ctx, list, ctrlruntimeclient.MatchingFields{indexPodNodeName: node.Name}); err != nil {
		return drainState{}, fmt.Errorf("failed to list the pods of Node %s: %w", node.Name, err)
	}
	var state drainState
	for i := range list.Items {
		pod := &list.Items[i]
		if !evictable(pod) {
			continue
		}
		if pod.DeletionTimestamp != nil {
			if now.Before(pod.DeletionTimestamp.Time) {
				state.pending++
			}
			continue
		}
		state.pending++
		err := c.SubResource("eviction").Create(ctx, pod, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}})
		switch {
		case err == nil, apierrors.IsNotFound(err):
		case apierrors.IsTooManyRequests(err):
			state.blocked++
		default:
			return state, fmt.Errorf("failed to evict pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	return state, nil
}

// evictable reports whether a drain removes the pod.
func evictable(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if _, ok := pod.Annotations[annotationMirrorPod]; ok {
		return false
	}
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "DaemonSet" {
		return false
	}
	return true
}

// shouldDrain reports whether a Node is drained before its Machine goes:
// not when it is not Ready (nothing would move its pods gracefully), not
// when annotated to skip, and not once the drain timeout since the
// Machine's deletion passed.
func shouldDrain(node *corev1.Node, deletedAt, now time.Time, timeout time.Duration) bool {
	if _, skip := node.Annotations[AnnotationSkipEviction]; skip {
		return false
	}
	return readyStatus(node) == corev1.ConditionTrue && now.Before(deletedAt.Add(timeout))
}
