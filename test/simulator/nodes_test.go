package simulator_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/simulator"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// TestSimulatorRegistersAndRemovesNodes runs infra and user cluster on one
// control plane: Nodes are cluster-scoped, VMs namespaced, so the two do
// not meet.
func TestSimulatorRegistersAndRemovesNodes(t *testing.T) {
	env := envtest.Start(t)
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	opts := simulator.Options{StartDelay: 200 * time.Millisecond, UserClient: env.Client}
	if err := simulator.Add(mgr, opts); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = mgr.Start(ctx) }()

	ns := env.CreateNamespace(t, "sim-nodes")
	vm := testVM(ns)
	c := env.Client
	if err := c.Create(ctx, vm); err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{}
	waitFor(t, "a Ready Node", func() bool {
		return c.Get(ctx, ctrlruntimeclient.ObjectKey{Name: vm.Name}, node) == nil && len(node.Status.Conditions) == 1 &&
			node.Status.Conditions[0].Status == corev1.ConditionTrue
	})
	if diff := cmp.Diff(simulator.ProviderID(vm.Name), node.Spec.ProviderID); diff != "" {
		t.Errorf("providerID (-want +got):\n%s", diff)
	}
	wantAddrs := []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: simulator.IPFor(ns, vm.Name)},
		{Type: corev1.NodeHostName, Address: vm.Name},
	}
	if diff := cmp.Diff(wantAddrs, node.Status.Addresses); diff != "" {
		t.Errorf("addresses (-want +got):\n%s", diff)
	}

	if err := c.Delete(ctx, vm); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the Node removed", func() bool {
		return apierrors.IsNotFound(c.Get(ctx, ctrlruntimeclient.ObjectKey{Name: vm.Name}, &corev1.Node{}))
	})
}
