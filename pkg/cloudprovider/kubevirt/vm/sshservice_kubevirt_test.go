package vm

import (
	"errors"
	"testing"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// TestSSHServiceSelectsKubeVirtsLauncherPod runs KubeVirt v1.9.0's own
// virt-controller, which turns VMs into VMIs and VMIs into virt-launcher
// pods, for two VMs of one MachineDeployment, and checks that the SSH
// Service of the first selects its launcher pod and nothing else. The VMs
// carry the VMI template labels Build writes; their disks are left out, so
// that virt-controller starts them without CDI.
func TestSSHServiceSelectsKubeVirtsLauncherPod(t *testing.T) {
	env := kubeVirtEnv(t)
	ctx := t.Context()
	namespace := env.CreateNamespace(t, "ssh")

	var svc *corev1.Service
	for _, name := range []string{"worker-1", "worker-2"} {
		in := testInput()
		in.Machine.Name = name
		in.Facts.Namespace = namespace
		in.Settings.SSHService = &config.SSHServiceSettings{
			Type: corev1.ServiceTypeNodePort, Port: 22, TargetPort: 22,
			ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster,
		}
		objs, err := Build(in)
		if err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Create(ctx, diskless(objs.VirtualMachine)); err != nil {
			t.Fatalf("failed to create VM %s: %v", name, err)
		}
		if svc == nil {
			svc = objs.SSHService
			if err := env.Client.Create(ctx, svc); err != nil {
				t.Fatalf("failed to create the SSH Service: %v", err)
			}
		}
	}

	launchers := &corev1.PodList{}
	err := poll.Wait(ctx, time.Minute, func() error {
		if err := env.Client.List(ctx, launchers, ctrlruntimeclient.InNamespace(namespace),
			ctrlruntimeclient.MatchingLabels{kubevirtcorev1.AppLabel: "virt-launcher"}); err != nil {
			return err
		}
		if len(launchers.Items) != 2 {
			return errors.New("not 2 launcher pods yet")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("virt-controller made %d launcher pods, want 2: %v; %v", len(launchers.Items), err, env.ComponentErrors())
	}
	vmi := &kubevirtcorev1.VirtualMachineInstance{}
	if err := env.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: "worker-1"}, vmi); err != nil {
		t.Fatal(err)
	}
	selected := &corev1.PodList{}
	if err := env.Client.List(ctx, selected, ctrlruntimeclient.InNamespace(namespace),
		ctrlruntimeclient.MatchingLabels(svc.Spec.Selector)); err != nil {
		t.Fatal(err)
	}
	if len(selected.Items) != 1 || selected.Items[0].Labels[kubevirtcorev1.CreatedByLabel] != string(vmi.UID) {
		var names []string
		for _, p := range selected.Items {
			names = append(names, p.Name)
		}
		t.Errorf("the SSH Service of worker-1 selects pods %v, want only the launcher pod of VMI %s", names, vmi.UID)
	}
}

// diskless returns a VM with the name, namespace and VMI template labels of
// v, and only what KubeVirt needs to start it.
func diskless(v *kubevirtcorev1.VirtualMachine) *kubevirtcorev1.VirtualMachine {
	return &kubevirtcorev1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: v.Namespace, Name: v.Name, Labels: v.Labels},
		Spec: kubevirtcorev1.VirtualMachineSpec{
			RunStrategy: ptr.To(kubevirtcorev1.RunStrategyAlways),
			Template: &kubevirtcorev1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: v.Spec.Template.ObjectMeta.Labels},
				Spec: kubevirtcorev1.VirtualMachineInstanceSpec{Domain: kubevirtcorev1.DomainSpec{
					Resources: kubevirtcorev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
					},
				}},
			},
		},
	}
}
