package simulator

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// unschedulableRetry is how soon a pod no node fits is tried again.
const unschedulableRetry = time.Second

// scheduler plays kube-scheduler for the pods of the infra cluster: it binds
// each pending pod to a Ready, schedulable node that satisfies its node
// selector, required node affinity, required pod anti-affinity and taints,
// the least loaded first, and picks the node of the WaitForFirstConsumer
// volumes it mounts as kube-scheduler's volume binding does.
type scheduler struct {
	client ctrlruntimeclient.Client
}

func (s *scheduler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pod := &corev1.Pod{}
	if err := s.client.Get(ctx, req.NamespacedName, pod); err != nil {
		return reconcile.Result{}, ctrlruntimeclient.IgnoreNotFound(err)
	}
	if pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil || !ourScheduler(pod) {
		return reconcile.Result{}, nil
	}
	node, why, err := s.pick(ctx, pod)
	if err != nil {
		return reconcile.Result{}, err
	}
	if node == "" {
		return reconcile.Result{RequeueAfter: unschedulableRetry}, s.markUnschedulable(ctx, pod, why)
	}
	if err := s.selectVolumeNode(ctx, pod, node); err != nil {
		return reconcile.Result{}, err
	}
	binding := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}
	if err := s.client.SubResource("binding").Create(ctx, pod, binding); ctrlruntimeclient.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, fmt.Errorf("failed to bind pod %s/%s to %s: %w", pod.Namespace, pod.Name, node, err)
	}
	return reconcile.Result{}, nil
}

// ourScheduler reports whether kube-scheduler would place the pod.
func ourScheduler(pod *corev1.Pod) bool {
	return pod.Spec.SchedulerName == "" || pod.Spec.SchedulerName == corev1.DefaultSchedulerName
}

// pick returns the node the pod goes to, or "" and why none fits.
func (s *scheduler) pick(ctx context.Context, pod *corev1.Pod) (string, string, error) {
	nodes := &corev1.NodeList{}
	if err := s.client.List(ctx, nodes); err != nil {
		return "", "", fmt.Errorf("failed to list nodes: %w", err)
	}
	pods := &corev1.PodList{}
	if err := s.client.List(ctx, pods); err != nil {
		return "", "", fmt.Errorf("failed to list pods: %w", err)
	}
	load := map[string]int{}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && !finished(&p) {
			load[p.Spec.NodeName]++
		}
	}
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	best, reasons := "", map[string]int{}
	for i := range nodes.Items {
		node := &nodes.Items[i]
		switch match, _ := affinity.Match(node); {
		case !nodeReady(node) || node.Spec.Unschedulable:
			reasons["not ready or unschedulable"]++
		case !match:
			reasons["didn't match node selector or affinity"]++
		case untoleratedTaint(ctx, pod, node):
			reasons["had untolerated taints"]++
		case antiAffine(pod, node, pods.Items):
			reasons["didn't satisfy pod anti-affinity"]++
		case best == "" || load[node.Name] < load[best] || load[node.Name] == load[best] && node.Name < best:
			best = node.Name
		}
	}
	return best, fmt.Sprintf("0/%d nodes are available: %v", len(nodes.Items), reasons), nil
}

func untoleratedTaint(ctx context.Context, pod *corev1.Pod, node *corev1.Node) bool {
	_, found := corev1helpers.FindMatchingUntoleratedTaint(log.FromContext(ctx), node.Spec.Taints, pod.Spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, false)
	return found
}

// antiAffine reports whether a pod the pod's required anti-affinity repels
// runs on the node (topology kubernetes.io/hostname: the node itself).
func antiAffine(pod *corev1.Pod, node *corev1.Node, pods []corev1.Pod) bool {
	if pod.Spec.Affinity == nil || pod.Spec.Affinity.PodAntiAffinity == nil {
		return false
	}
	for _, term := range pod.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		selector, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
		if err != nil || term.TopologyKey != corev1.LabelHostname {
			continue
		}
		namespaces := term.Namespaces
		if len(namespaces) == 0 {
			namespaces = []string{pod.Namespace}
		}
		for _, other := range pods {
			if other.Spec.NodeName == node.Name && other.UID != pod.UID && !finished(&other) &&
				slices.Contains(namespaces, other.Namespace) && selector.Matches(labels.Set(other.Labels)) {
				return true
			}
		}
	}
	return false
}

// selectVolumeNode records the chosen node on the pod's unbound PVCs of
// WaitForFirstConsumer classes, which then get provisioned there.
func (s *scheduler) selectVolumeNode(ctx context.Context, pod *corev1.Pod, node string) error {
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim == nil {
			continue
		}
		pvc := &corev1.PersistentVolumeClaim{}
		key := ctrlruntimeclient.ObjectKey{Namespace: pod.Namespace, Name: vol.PersistentVolumeClaim.ClaimName}
		if err := s.client.Get(ctx, key, pvc); err != nil {
			if ctrlruntimeclient.IgnoreNotFound(err) == nil {
				continue
			}
			return err
		}
		if pvc.Spec.VolumeName != "" || pvc.Annotations[AnnotationSelectedNode] != "" {
			continue
		}
		if wffc, err := waitsForConsumer(ctx, s.client, pvc); err != nil || !wffc {
			return err
		}
		base := pvc.DeepCopy()
		metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, AnnotationSelectedNode, node)
		if err := s.client.Patch(ctx, pvc, ctrlruntimeclient.MergeFrom(base)); err != nil {
			return fmt.Errorf("failed to select node %s for PVC %s: %w", node, key, err)
		}
	}
	return nil
}

// markUnschedulable records why the pod waits, as kube-scheduler does.
func (s *scheduler) markUnschedulable(ctx context.Context, pod *corev1.Pod, why string) error {
	if c := podCondition(pod, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse && c.Message == why {
		return nil
	}
	base := pod.DeepCopy()
	setPodCondition(pod, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: why})
	return ctrlruntimeclient.IgnoreNotFound(s.client.Status().Patch(ctx, pod, ctrlruntimeclient.MergeFrom(base)))
}
