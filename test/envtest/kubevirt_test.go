package envtest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

func TestKubeVirt(t *testing.T) {
	env := Start(t, WithVirtController())
	ctx := t.Context()
	c := env.Client
	ns := env.CreateNamespace(t, "kv")

	vm := &kubevirtcorev1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vm"},
		Spec: kubevirtcorev1.VirtualMachineSpec{
			RunStrategy: ptr.To(kubevirtcorev1.RunStrategyAlways),
			Template: &kubevirtcorev1.VirtualMachineInstanceTemplateSpec{Spec: kubevirtcorev1.VirtualMachineInstanceSpec{
				Domain: kubevirtcorev1.DomainSpec{Resources: kubevirtcorev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
				}},
			}},
		},
	}
	t.Run("admission defaults and refuses", func(t *testing.T) {
		bad := vm.DeepCopy()
		bad.Spec.Template.Spec.Domain.Devices.Disks = []kubevirtcorev1.Disk{{Name: "missing"}}
		err := c.Create(ctx, bad, ctrlruntimeclient.DryRunAll)
		if err == nil || !strings.Contains(err.Error(), "missing") {
			t.Errorf("a disk without a volume was not refused by KubeVirt: %v", err)
		}
	})
	t.Run("AdmitVM", func(t *testing.T) { testAdmitVM(t, env, vm) })
	if err := c.Create(ctx, vm); err != nil {
		t.Fatal(err)
	}
	if vm.Spec.Template.Spec.Domain.Firmware == nil || vm.Spec.Template.Spec.Domain.Firmware.Serial == "" {
		t.Errorf("the stored VM has no firmware serial: KubeVirt's mutating webhook did not run")
	}
	t.Run("virt-controller creates the VMI and its launcher pod", func(t *testing.T) {
		err := poll.Wait(ctx, time.Minute, func() error {
			pods := &corev1.PodList{}
			if err := c.List(ctx, pods, ctrlruntimeclient.InNamespace(ns), ctrlruntimeclient.MatchingLabels{kubevirtcorev1.AppLabel: "virt-launcher"}); err != nil {
				return err
			}
			if len(pods.Items) != 1 {
				return fmt.Errorf("%d virt-launcher pods, want 1", len(pods.Items))
			}
			return nil
		})
		if err != nil {
			vmi := &kubevirtcorev1.VirtualMachineInstance{}
			_ = c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(vm), vmi)
			t.Fatalf("no virt-launcher pod (VMI phase %q): %v; %v", vmi.Status.Phase, err, env.ComponentErrors())
		}
	})
	t.Run("virt-controller loads its certificate once", func(t *testing.T) {
		// KubeVirt reloads a certificate on every inotify event in its
		// directory; anything written there (a log) made it reload in a
		// loop, a thousand lines a second: by now it has run for seconds.
		log, err := env.ComponentLog("virt-controller")
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(log, "certificate with common name"); n > 3 {
			t.Errorf("virt-controller loaded its certificates %d times while idle, want at most 3 (one per certificate)", n)
		}
	})
}
