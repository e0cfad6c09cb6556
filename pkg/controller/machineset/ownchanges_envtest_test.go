package machineset

import (
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// A MachineSet whose status alone changed is not reconciled again: that is
// what its reconcile writes, once per status window. A change of its
// metadata or spec is reconciled, and its status computed again.
func TestStatusOnlyUpdateIsNotReconciled(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDFiles("cluster.k8s.io.yaml"))
	ctx := t.Context()
	ns := env.CreateNamespace(t, "own")
	runController(t, env, nil, Options{})

	ms := createMachineSet(t, env, ns, 0)
	waitForStatus(t, env, ms, clusterv1alpha1.MachineSetStatus{})
	settled := waitForNoReconcile(t, time.Second)

	if err := env.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(ms), ms); err != nil {
		t.Fatal(err)
	}
	base := ms.DeepCopy()
	ms.Status.Replicas = 5
	if err := env.Client.Status().Patch(ctx, ms, ctrlruntimeclient.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if got := envtest.Reconciles(t, ControllerName) - settled; got != 0 {
		t.Fatalf("a status-only update caused %v reconciles, want 0", got)
	}

	base = ms.DeepCopy()
	ms.Labels = map[string]string{"team": "b"}
	if err := env.Client.Patch(ctx, ms, ctrlruntimeclient.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	waitForStatus(t, env, ms, clusterv1alpha1.MachineSetStatus{})
	if envtest.Reconciles(t, ControllerName) == settled {
		t.Error("a label change caused no reconcile")
	}
}

// waitForNoReconcile waits until the MachineSet controller has not
// reconciled for quiet and returns its reconcile count.
func waitForNoReconcile(t *testing.T, quiet time.Duration) float64 {
	t.Helper()
	last := envtest.Reconciles(t, ControllerName)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		time.Sleep(quiet)
		n := envtest.Reconciles(t, ControllerName)
		if n == last {
			return n
		}
		last = n
	}
	t.Fatal("the MachineSet controller did not stop reconciling within 30s")
	return 0
}
