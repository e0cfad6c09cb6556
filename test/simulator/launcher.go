package simulator

import (
	"context"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// launcher plays virt-launcher, the compute container of a VMI's pod: it
// runs while its VMI runs on the pod's node and exits, ending the pod, once
// the VMI has ended, is gone, or has migrated to another node (the source
// domain is gone then). The kubelet looks again whenever the VMI changes.
type launcher struct {
	client ctrlruntimeclient.Reader
}

func (l *launcher) programs() map[string]program {
	return map[string]program{"virt-launcher": {run: l.run, endsPod: true}}
}

func (l *launcher) run(ctx context.Context, pod *corev1.Pod, status *corev1.ContainerStatus) (outcome, error) {
	if status.Name != "compute" {
		return outcome{}, nil
	}
	vmi := &kubevirtcorev1.VirtualMachineInstance{}
	key := ctrlruntimeclient.ObjectKey{Namespace: pod.Namespace, Name: pod.Annotations[kubevirtcorev1.DomainAnnotation]}
	err := l.client.Get(ctx, key, vmi)
	switch {
	case apierrors.IsNotFound(err) || err == nil && string(vmi.UID) != pod.Labels[kubevirtcorev1.CreatedByLabel]:
		return outcome{done: true}, nil
	case err != nil:
		return outcome{}, err
	case vmi.IsFinal():
		return outcome{done: true}, nil
	case migratedAway(vmi, pod):
		return outcome{done: true}, nil
	}
	return outcome{}, nil
}

// migratedAway reports whether the VMI completed a migration off the pod's
// node after the pod started.
func migratedAway(vmi *kubevirtcorev1.VirtualMachineInstance, pod *corev1.Pod) bool {
	ms := vmi.Status.MigrationState
	return ms != nil && ms.Completed && !ms.Failed && ms.SourceNode == pod.Spec.NodeName && ms.SourcePod == pod.Name
}
