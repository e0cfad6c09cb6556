package machineset

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

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
	settled := poll.Settled(t, 30*time.Second, time.Second, "the MachineSet controller's reconciles", func() float64 {
		return envtest.Reconciles(t, ControllerName)
	})

	if err := env.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(ms), ms); err != nil {
		t.Fatal(err)
	}
	base := ms.DeepCopy()
	ms.Status.Replicas = 5
	if err := env.Client.Status().Patch(ctx, ms, ctrlruntimeclient.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	poll.Holds(t, 2*time.Second, func() error {
		if got := envtest.Reconciles(t, ControllerName) - settled; got != 0 {
			return fmt.Errorf("a status-only update caused %v reconciles, want 0", got)
		}
		return nil
	})

	base = ms.DeepCopy()
	ms.Labels = map[string]string{"team": "b"}
	if err := env.Client.Patch(ctx, ms, ctrlruntimeclient.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	waitForStatus(t, env, ms, clusterv1alpha1.MachineSetStatus{})
	// The reconcile counter moves when the reconcile returns, after the
	// status it wrote may already be seen.
	poll.Until(t, 30*time.Second, func() error {
		if envtest.Reconciles(t, ControllerName) == settled {
			return errors.New("a label change caused no reconcile")
		}
		return nil
	})
}
