package simulator_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/simulator"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

func (r *rig) testCrashes(t *testing.T) {
	ctx, c := t.Context(), r.env.Client
	ns := r.env.CreateNamespace(t, "crash")
	vm := r.vm(ns, "vm", localClass, corev1.ReadWriteOnce, kubevirtcorev1.EvictionStrategyNone)
	if err := c.Create(ctx, vm); err != nil {
		t.Fatal(err)
	}
	first := r.runningVMI(t, vm, "")
	if err := simulator.StopVMI(ctx, c, ns, vm.Name, true); err != nil {
		t.Fatal(err)
	}
	r.runningVMI(t, vm, string(first.UID))

	if err := simulator.StopVMI(ctx, c, ns, vm.Name, false); err != nil {
		t.Fatal(err)
	}
	poll.UntilState(t, time.Minute, "KubeVirt backs the crashing VM's restarts off", func() (bool, string) {
		got := &kubevirtcorev1.VirtualMachine{}
		err := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(vm), got)
		return err == nil && got.Status.PrintableStatus == kubevirtcorev1.VirtualMachineStatusCrashLoopBackOff,
			fmt.Sprintf("status %q, %v", got.Status.PrintableStatus, err)
	})
	if err := c.Delete(ctx, vm); err != nil {
		t.Fatal(err)
	}
}

// evacuated creates a VM with the given storage and eviction strategy in a
// new namespace, waits for its VMI to run and evacuates the VMI's node,
// which is made schedulable again when the test ends.
func (r *rig) evacuated(t *testing.T, prefix, class string, mode corev1.PersistentVolumeAccessMode,
	strategy kubevirtcorev1.EvictionStrategy,
) (*kubevirtcorev1.VirtualMachine, *kubevirtcorev1.VirtualMachineInstance, string) {
	t.Helper()
	ctx, c := t.Context(), r.env.Client
	vm := r.vm(r.env.CreateNamespace(t, prefix), "vm", class, mode, strategy)
	if err := c.Create(ctx, vm); err != nil {
		t.Fatal(err)
	}
	before := r.runningVMI(t, vm, "")
	node, err := simulator.Evacuate(ctx, c, vm.Namespace, vm.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = simulator.SetSchedulable(context.Background(), c, node, true) })
	return vm, before, node
}

func (r *rig) testLiveMigration(t *testing.T) {
	ctx, c := t.Context(), r.env.Client
	vm, before, node := r.evacuated(t, "migrate", sharedClass, corev1.ReadWriteMany, kubevirtcorev1.EvictionStrategyLiveMigrate)
	ns := vm.Namespace
	poll.UntilState(t, time.Minute, "KubeVirt's evacuation migrates the VMI off the drained node", func() (bool, string) {
		vmi := &kubevirtcorev1.VirtualMachineInstance{}
		err := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(vm), vmi)
		ms := vmi.Status.MigrationState
		return err == nil && vmi.UID == before.UID && vmi.Status.NodeName != node && vmi.Status.EvacuationNodeName == "" && ms != nil && ms.Completed,
			fmt.Sprintf("uid %s on %q, evacuation %q, migration %+v, %v", vmi.UID, vmi.Status.NodeName, vmi.Status.EvacuationNodeName, ms, err)
	})
	poll.UntilState(t, time.Minute, "the migration succeeded and the source pod ended", func() (bool, string) {
		migrations := &kubevirtcorev1.VirtualMachineInstanceMigrationList{}
		if err := c.List(ctx, migrations, ctrlruntimeclient.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, ctrlruntimeclient.InNamespace(ns), ctrlruntimeclient.MatchingLabels{kubevirtcorev1.CreatedByLabel: string(before.UID)}); err != nil {
			return false, err.Error()
		}
		running := 0
		for _, pod := range pods.Items {
			if pod.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return len(migrations.Items) == 1 && migrations.Items[0].Status.Phase == kubevirtcorev1.MigrationSucceeded && running == 1,
			fmt.Sprintf("%d migrations, %d running pods", len(migrations.Items), running)
	})
	if err := c.Delete(t.Context(), vm); err != nil {
		t.Fatal(err)
	}
}

func (r *rig) testExternalEvacuation(t *testing.T) {
	ctx, c := t.Context(), r.env.Client
	vm, before, node := r.evacuated(t, "external", localClass, corev1.ReadWriteOnce, kubevirtcorev1.EvictionStrategyExternal)
	vmi := &kubevirtcorev1.VirtualMachineInstance{}
	if err := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(vm), vmi); err != nil {
		t.Fatal(err)
	}
	if vmi.Status.EvacuationNodeName != node {
		t.Fatalf("KubeVirt did not mark the VMI for evacuation: evacuationNodeName %q, want %q", vmi.Status.EvacuationNodeName, node)
	}
	// What the machine-controller does for External: the VMI goes, the VM
	// starts a new one, away from the cordoned node.
	if err := c.Delete(ctx, vmi); err != nil {
		t.Fatal(err)
	}
	after := r.runningVMI(t, vm, string(before.UID))
	if after.Status.NodeName == node {
		t.Errorf("the restarted VMI runs on the drained node %s", node)
	}
	if err := c.Delete(ctx, vm); err != nil {
		t.Fatal(err)
	}
}

func (r *rig) testClone(t *testing.T) {
	ctx, c := t.Context(), r.env.Client
	ns := r.env.CreateNamespace(t, "clone")
	storage := &cdicorev1beta1.StorageSpec{
		StorageClassName: ptr.To(localClass), AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
	}
	source := &cdicorev1beta1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "image"},
		Spec: cdicorev1beta1.DataVolumeSpec{Storage: storage, Source: &cdicorev1beta1.DataVolumeSource{
			HTTP: &cdicorev1beta1.DataVolumeSourceHTTP{URL: r.images.url + "/image.img"}}},
	}
	target := &cdicorev1beta1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "disk"},
		Spec: cdicorev1beta1.DataVolumeSpec{Storage: storage, Source: &cdicorev1beta1.DataVolumeSource{
			PVC: &cdicorev1beta1.DataVolumeSourcePVC{Namespace: ns, Name: "image"}}},
	}
	for _, dv := range []*cdicorev1beta1.DataVolume{source, target} {
		if err := c.Create(ctx, dv); err != nil {
			t.Fatal(err)
		}
	}
	poll.UntilState(t, time.Minute, "the clone succeeded and its source pod is gone", func() (bool, string) {
		got := &cdicorev1beta1.DataVolume{}
		if err := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(target), got); err != nil {
			return false, err.Error()
		}
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, ctrlruntimeclient.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		return got.Status.Phase == cdicorev1beta1.Succeeded && len(pods.Items) == 0, fmt.Sprintf("phase %q, %d pods", got.Status.Phase, len(pods.Items))
	})
}
