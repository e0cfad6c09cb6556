package simulator_test

import (
	"context"
	"testing"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/simulator"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func TestSimulatorDrivesVMToRunningAndGarbageCollects(t *testing.T) {
	env := envtest.Start(t, envtest.WithControllerManager())
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := simulator.Add(mgr, simulator.Options{ImportDelay: 300 * time.Millisecond, StartDelay: 300 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = mgr.Start(ctx) }()

	ns := env.CreateNamespace(t, "sim")
	vm := testVM(ns)
	if err := env.Client.Create(ctx, vm); err != nil {
		t.Fatal(err)
	}
	c := env.Client
	waitFor(t, "VMI running with an IP", func() bool {
		vmi := &kubevirtcorev1.VirtualMachineInstance{}
		if c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(vm), vmi) != nil {
			return false
		}
		return vmi.Status.Phase == kubevirtcorev1.Running && len(vmi.Status.Interfaces) == 1 &&
			vmi.Status.Interfaces[0].IP == simulator.IPFor(ns, vm.Name)
	})
	for _, name := range []string{"vm-1", "vm-1-data"} {
		dv := &cdicorev1beta1.DataVolume{}
		if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: ns, Name: name}, dv); err != nil {
			t.Fatalf("DataVolume %s: %v", name, err)
		}
		if dv.Status.Phase != cdicorev1beta1.Succeeded {
			t.Errorf("DataVolume %s phase = %q, want Succeeded", name, dv.Status.Phase)
		}
	}
	waitFor(t, "VM ready", func() bool {
		got := &kubevirtcorev1.VirtualMachine{}
		return c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(vm), got) == nil && got.Status.Ready &&
			got.Status.PrintableStatus == kubevirtcorev1.VirtualMachineStatusRunning
	})

	if err := c.Delete(ctx, vm, ctrlruntimeclient.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "VMI and DataVolumes garbage-collected", func() bool {
		for _, obj := range []ctrlruntimeclient.Object{
			&kubevirtcorev1.VirtualMachineInstance{}, &cdicorev1beta1.DataVolume{},
		} {
			if !apierrors.IsNotFound(c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: ns, Name: "vm-1"}, obj)) {
				return false
			}
		}
		return true
	})
}

func testVM(ns string) *kubevirtcorev1.VirtualMachine {
	storage := func(size string) *cdicorev1beta1.StorageSpec {
		return &cdicorev1beta1.StorageSpec{Resources: corev1.VolumeResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
		}}
	}
	return &kubevirtcorev1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: "vm-1", Namespace: ns},
		Spec: kubevirtcorev1.VirtualMachineSpec{
			RunStrategy: ptr.To(kubevirtcorev1.RunStrategyAlways),
			DataVolumeTemplates: []kubevirtcorev1.DataVolumeTemplateSpec{
				{ObjectMeta: metav1.ObjectMeta{Name: "vm-1"}, Spec: cdicorev1beta1.DataVolumeSpec{
					Source:  &cdicorev1beta1.DataVolumeSource{HTTP: &cdicorev1beta1.DataVolumeSourceHTTP{URL: "http://127.0.0.1/img"}},
					Storage: storage("10Gi"),
				}},
				{ObjectMeta: metav1.ObjectMeta{Name: "vm-1-data"}, Spec: cdicorev1beta1.DataVolumeSpec{
					Source:  &cdicorev1beta1.DataVolumeSource{Blank: &cdicorev1beta1.DataVolumeBlankImage{}},
					Storage: storage("1Gi"),
				}},
			},
			Template: &kubevirtcorev1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"kubevirt.io/vm": "vm-1"}},
			},
		},
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
