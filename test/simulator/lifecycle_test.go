package simulator_test

import (
	"context"
	"slices"
	"testing"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/simulator"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func TestSimulatorRestartsStoppedVMIs(t *testing.T) {
	env := envtest.Start(t, envtest.WithControllerManager())
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := simulator.Add(mgr, simulator.Options{StartDelay: 100 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = mgr.Start(ctx) }()

	ns := env.CreateNamespace(t, "sim")
	c := env.Client
	vm := testVM(ns)
	if err := c.Create(ctx, vm); err != nil {
		t.Fatal(err)
	}
	key := ctrlruntimeclient.ObjectKeyFromObject(vm)
	first := waitForRunning(t, c, key, "")

	if err := simulator.StopVMI(ctx, c, ns, vm.Name, true); err != nil {
		t.Fatal(err)
	}
	waitForRunning(t, c, key, first)

	if err := simulator.StopVMI(ctx, c, ns, vm.Name, false); err != nil {
		t.Fatal(err)
	}
	// The VMI stays Failed: the simulator had time to restart it.
	time.Sleep(time.Second)
	vmi := &kubevirtcorev1.VirtualMachineInstance{}
	if err := c.Get(ctx, key, vmi); err != nil {
		t.Fatal(err)
	}
	if vmi.Status.Phase != kubevirtcorev1.Failed {
		t.Errorf("VMI of a VM that must not restart is %s, want Failed", vmi.Status.Phase)
	}
}

// waitForRunning waits for a running VMI whose UID is not notUID and
// returns its UID.
func waitForRunning(t *testing.T, c ctrlruntimeclient.Client, key types.NamespacedName, notUID types.UID) types.UID {
	t.Helper()
	vmi := &kubevirtcorev1.VirtualMachineInstance{}
	waitFor(t, "a running VMI", func() bool {
		return c.Get(t.Context(), key, vmi) == nil && vmi.UID != notUID && vmi.Status.Phase == kubevirtcorev1.Running
	})
	return vmi.UID
}

func TestSimulatorEvacuatesAndMigrates(t *testing.T) {
	env := envtest.Start(t, envtest.WithControllerManager())
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := simulator.Add(mgr, simulator.Options{StartDelay: 100 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = mgr.Start(ctx) }()

	ns := env.CreateNamespace(t, "sim")
	c := env.Client
	vm := testVM(ns)
	if err := c.Create(ctx, vm); err != nil {
		t.Fatal(err)
	}
	key := ctrlruntimeclient.ObjectKeyFromObject(vm)
	uid := waitForRunning(t, c, key, "")
	if err := simulator.Evacuate(ctx, c, ns, vm.Name); err != nil {
		t.Fatal(err)
	}
	vmi := &kubevirtcorev1.VirtualMachineInstance{}
	if err := c.Get(ctx, key, vmi); err != nil {
		t.Fatal(err)
	}
	if vmi.Status.EvacuationNodeName != simulator.NodeName {
		t.Errorf("evacuationNodeName = %q, want %q", vmi.Status.EvacuationNodeName, simulator.NodeName)
	}
	migration := &kubevirtcorev1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "evacuate", Namespace: ns},
		Spec:       kubevirtcorev1.VirtualMachineInstanceMigrationSpec{VMIName: vm.Name},
	}
	if err := c.Create(ctx, migration); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the migration to complete", func() bool {
		got := &kubevirtcorev1.VirtualMachineInstanceMigration{}
		return c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(migration), got) == nil && got.Status.Phase == kubevirtcorev1.MigrationSucceeded
	})
	if err := c.Get(ctx, key, vmi); err != nil {
		t.Fatal(err)
	}
	got := []string{string(vmi.UID), vmi.Status.NodeName, vmi.Status.EvacuationNodeName}
	if want := []string{string(uid), simulator.SecondNodeName, ""}; !slices.Equal(got, want) {
		t.Errorf("migrated VMI (uid, node, evacuation) = %v, want %v", got, want)
	}

	// A VMI deleted for its evacuation comes back on the other node.
	if err := simulator.Evacuate(ctx, c, ns, vm.Name); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, vmi); err != nil {
		t.Fatal(err)
	}
	waitForRunning(t, c, key, uid)
	if err := c.Get(ctx, key, vmi); err != nil {
		t.Fatal(err)
	}
	if vmi.Status.NodeName != simulator.NodeName {
		t.Errorf("restarted VMI runs on %s, want %s (away from %s)", vmi.Status.NodeName, simulator.NodeName, simulator.SecondNodeName)
	}
}
