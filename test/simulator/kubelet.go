package simulator

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// outcome is how a simulated container process ended, or that it still
// runs (with when to look again).
type outcome struct {
	done     bool
	exitCode int32
	message  string // the termination message the real program writes
	recheck  time.Duration
}

// program plays what a container of a pod runs, by image: it decides when
// the container ends and what it reports. Containers without a program run
// until their pod is deleted.
type program struct {
	run func(ctx context.Context, pod *corev1.Pod, container *corev1.ContainerStatus) (outcome, error)
	// endsPod stops the pod's other containers when this one ends: it is
	// the pod's main process.
	endsPod bool
	// noPodIP leaves the pod without an IP: the real program serves
	// progress metrics there, which nothing here serves, and
	// cdi-controller's probe of an address that never answers would stall
	// its status updates.
	noPodIP bool
}

// kubelet plays the kubelets of the simulated infra nodes: pods bound to
// them start at once (init containers complete, containers run, IPs are
// assigned), programs decide when a container ends and what its termination
// message says, readiness follows the pod's readiness gates, and a deleted
// pod's containers stop and the pod goes.
type kubelet struct {
	client   ctrlruntimeclient.Client
	nodes    []string
	programs map[string]program // by image name, without registry and tag
}

func (k *kubelet) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pod := &corev1.Pod{}
	if err := k.client.Get(ctx, req.NamespacedName, pod); err != nil {
		return reconcile.Result{}, ctrlruntimeclient.IgnoreNotFound(err)
	}
	if !slices.Contains(k.nodes, pod.Spec.NodeName) {
		return reconcile.Result{}, nil
	}
	if pod.DeletionTimestamp != nil {
		// The containers stop at once; the kubelet then removes the pod.
		err := k.client.Delete(ctx, pod, ctrlruntimeclient.GracePeriodSeconds(0), ctrlruntimeclient.Preconditions{UID: &pod.UID})
		return reconcile.Result{}, ctrlruntimeclient.IgnoreNotFound(err)
	}
	if finished(pod) {
		return reconcile.Result{}, nil
	}
	base := pod.DeepCopy()
	if pod.Status.Phase != corev1.PodRunning {
		k.start(pod)
	}
	recheck, err := k.runPrograms(ctx, pod)
	if err != nil {
		return reconcile.Result{}, err
	}
	k.updateReadiness(pod)
	if equality.Semantic.DeepEqual(base.Status, pod.Status) {
		return reconcile.Result{RequeueAfter: recheck}, nil
	}
	if err := k.client.Status().Patch(ctx, pod, ctrlruntimeclient.MergeFrom(base)); ctrlruntimeclient.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, fmt.Errorf("failed to report the status of pod %s: %w", req, err)
	}
	return reconcile.Result{RequeueAfter: recheck}, nil
}

// start runs a pod: its init containers have completed, its containers run.
func (k *kubelet) start(pod *corev1.Pod) {
	now := metav1.Now()
	pod.Status.Phase = corev1.PodRunning
	pod.Status.StartTime = &now
	if !k.unreachable(pod) {
		ip := IPFor(pod.Namespace, pod.Name)
		pod.Status.PodIP, pod.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	}
	pod.Status.HostIP = hostIP(pod.Spec.NodeName)
	pod.Status.HostIPs = []corev1.HostIP{{IP: pod.Status.HostIP}}
	pod.Status.InitContainerStatuses = nil
	for _, c := range pod.Spec.InitContainers {
		pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, ContainerID: containerID(pod, c.Name), Ready: true,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}},
		})
	}
	pod.Status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, ContainerID: containerID(pod, c.Name),
			Ready: true, Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	setPodCondition(pod, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue})
	setPodCondition(pod, corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue})
}

// runPrograms lets the programs of the running containers decide whether
// they ended; the pod ends when all of them have (Succeeded when all exited
// with 0). It returns when to look again.
func (k *kubelet) runPrograms(ctx context.Context, pod *corev1.Pod) (time.Duration, error) {
	var recheck time.Duration
	mainEnded := false
	for i := range pod.Status.ContainerStatuses {
		status := &pod.Status.ContainerStatuses[i]
		prog, ok := k.programs[imageName(status.Image)]
		if !ok || status.State.Running == nil {
			continue
		}
		out, err := prog.run(ctx, pod, status)
		if err != nil {
			return 0, err
		}
		if !out.done {
			if out.recheck > 0 && (recheck == 0 || out.recheck < recheck) {
				recheck = out.recheck
			}
			continue
		}
		terminate(status, out.exitCode, out.message)
		mainEnded = mainEnded || prog.endsPod
	}
	running, failed := 0, false
	for i := range pod.Status.ContainerStatuses {
		status := &pod.Status.ContainerStatuses[i]
		if status.State.Running != nil && mainEnded {
			terminate(status, 0, "")
		}
		switch {
		case status.State.Running != nil:
			running++
		case status.State.Terminated != nil && status.State.Terminated.ExitCode != 0:
			failed = true
		}
	}
	if running == 0 {
		pod.Status.Phase = corev1.PodSucceeded
		if failed {
			pod.Status.Phase = corev1.PodFailed
		}
	}
	return recheck, nil
}

// terminate records that a running container exited.
func terminate(status *corev1.ContainerStatus, exitCode int32, message string) {
	reason := "Completed"
	if exitCode != 0 {
		reason = "Error"
	}
	status.Ready, status.Started = false, ptr.To(false)
	status.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: exitCode, Reason: reason, Message: message,
		StartedAt: status.State.Running.StartedAt, FinishedAt: metav1.Now(), ContainerID: status.ContainerID,
	}}
}

// updateReadiness sets ContainersReady and Ready as the kubelet computes
// them: all containers ready, and for Ready also every readiness gate's
// condition True.
func (k *kubelet) updateReadiness(pod *corev1.Pod) {
	ready := !finished(pod)
	for _, c := range pod.Status.ContainerStatuses {
		ready = ready && c.Ready
	}
	setPodCondition(pod, corev1.PodCondition{Type: corev1.ContainersReady, Status: conditionStatus(ready)})
	for _, gate := range pod.Spec.ReadinessGates {
		c := podCondition(pod, gate.ConditionType)
		ready = ready && c != nil && c.Status == corev1.ConditionTrue
	}
	setPodCondition(pod, corev1.PodCondition{Type: corev1.PodReady, Status: conditionStatus(ready)})
}

func conditionStatus(b bool) corev1.ConditionStatus {
	if b {
		return corev1.ConditionTrue
	}
	return corev1.ConditionFalse
}

func containerID(pod *corev1.Pod, container string) string {
	return "simulator://" + string(pod.UID) + "/" + container
}

// unreachable reports whether a container of the pod runs a program that
// leaves the pod without an IP.
func (k *kubelet) unreachable(pod *corev1.Pod) bool {
	for _, c := range pod.Spec.Containers {
		if k.programs[imageName(c.Image)].noPodIP {
			return true
		}
	}
	return false
}
