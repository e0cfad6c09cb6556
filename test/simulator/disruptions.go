package simulator

import (
	"context"
	"fmt"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// Annotations by which a test makes guests fail.
const (
	// AnnotationCrash on a VMI ("true") makes its guest crash: the
	// simulated virt-handler reports the VMI Failed.
	AnnotationCrash = "simulator.kkp-kubevirt.test/crash"
	// AnnotationCrashLoop on a VM ("true") makes every guest of it crash at
	// boot, so KubeVirt restarts it with growing back-off
	// (CrashLoopBackOff).
	AnnotationCrashLoop = "simulator.kkp-kubevirt.test/crash-loop"
)

// StopVMI makes the guest of a VM crash. With restart, KubeVirt restarts it
// (a new VMI, for runStrategy Always); without, the VM is marked to crash at
// every boot first, so it stays down in KubeVirt's restart back-off.
func StopVMI(ctx context.Context, c ctrlruntimeclient.Client, namespace, name string, restart bool) error {
	key := ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: name}
	if !restart {
		if err := annotate(ctx, c, key, &kubevirtcorev1.VirtualMachine{}, AnnotationCrashLoop); err != nil {
			return err
		}
	}
	return annotate(ctx, c, key, &kubevirtcorev1.VirtualMachineInstance{}, AnnotationCrash)
}

// annotate sets an annotation to "true".
func annotate(ctx context.Context, c ctrlruntimeclient.Client, key ctrlruntimeclient.ObjectKey, obj ctrlruntimeclient.Object, annotation string) error {
	if err := c.Get(ctx, key, obj); err != nil {
		return fmt.Errorf("failed to get %T %s: %w", obj, key, err)
	}
	base := obj.DeepCopyObject().(ctrlruntimeclient.Object)
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[annotation] = "true"
	obj.SetAnnotations(annotations)
	if err := c.Patch(ctx, obj, ctrlruntimeclient.MergeFrom(base)); err != nil {
		return fmt.Errorf("failed to annotate %T %s: %w", obj, key, err)
	}
	return nil
}

// Evacuate plays the drain of the infra node a VM's VMI runs on, as kubectl
// drain does it: the node is cordoned and the VMI's virt-launcher pod asked
// to leave through the eviction API. KubeVirt's own admission answers: for
// evictionStrategy LiveMigrate or External it marks the VMI for evacuation
// (status.evacuationNodeName) and refuses the eviction; for None the pod is
// evicted. It returns the node.
func Evacuate(ctx context.Context, c ctrlruntimeclient.Client, namespace, name string) (string, error) {
	vmi := &kubevirtcorev1.VirtualMachineInstance{}
	if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: name}, vmi); err != nil {
		return "", fmt.Errorf("failed to get VMI %s/%s: %w", namespace, name, err)
	}
	node := vmi.Status.NodeName
	if err := SetSchedulable(ctx, c, node, false); err != nil {
		return "", err
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, ctrlruntimeclient.InNamespace(namespace), ctrlruntimeclient.MatchingLabels{kubevirtcorev1.CreatedByLabel: string(vmi.UID)}); err != nil {
		return "", fmt.Errorf("failed to list the pods of VMI %s/%s: %w", namespace, name, err)
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Spec.NodeName != node || finished(pod) {
			continue
		}
		eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name}}
		err := c.SubResource("eviction").Create(ctx, pod, eviction)
		// 429 is how KubeVirt answers an eviction it turned into an
		// evacuation.
		if err != nil && !apierrors.IsTooManyRequests(err) && !apierrors.IsNotFound(err) {
			return "", fmt.Errorf("failed to evict pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	return node, nil
}

// SetSchedulable cordons (false) or uncordons (true) an infra node.
func SetSchedulable(ctx context.Context, c ctrlruntimeclient.Client, node string, schedulable bool) error {
	n := &corev1.Node{}
	if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Name: node}, n); err != nil {
		return fmt.Errorf("failed to get node %s: %w", node, err)
	}
	if n.Spec.Unschedulable == !schedulable {
		return nil
	}
	base := n.DeepCopy()
	n.Spec.Unschedulable = !schedulable
	if err := c.Patch(ctx, n, ctrlruntimeclient.MergeFrom(base)); err != nil {
		return fmt.Errorf("failed to set node %s schedulable=%v: %w", node, schedulable, err)
	}
	return nil
}
