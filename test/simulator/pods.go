package simulator

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// finished reports whether a pod has ended.
func finished(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// podCondition returns the pod's condition of the type, or nil.
func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// setPodCondition sets a condition; one that says the same is left as is.
func setPodCondition(pod *corev1.Pod, c corev1.PodCondition) {
	old := podCondition(pod, c.Type)
	if old != nil && old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message {
		return
	}
	c.LastTransitionTime = metav1.Now()
	if old != nil {
		*old = c
		return
	}
	pod.Status.Conditions = append(pod.Status.Conditions, c)
}

// imageName is an image reference without registry, path and tag or
// digest: quay.io/kubevirt/cdi-importer:v1.65.0 is cdi-importer.
func imageName(ref string) string {
	if i := strings.LastIndex(ref, "/"); i >= 0 {
		ref = ref[i+1:]
	}
	if i := strings.IndexAny(ref, ":@"); i >= 0 {
		ref = ref[:i]
	}
	return ref
}

// nodeReady reports whether a node's Ready condition is True.
func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
