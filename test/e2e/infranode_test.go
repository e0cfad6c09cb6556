package e2e

import (
	"context"
	"fmt"
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/machine"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// infraNodeLabelsConfigMap names the ConfigMap of the user cluster that
// lists the infra node labels the suite's controller copies.
const infraNodeLabelsConfigMap = "infra-node-labels"

// testInfraNodeLabels lists an infra node label in the ConfigMap (user
// cluster workloads placed by infra topology): the Node of a VM on
// that infra node gets it, follows a change of it on the infra node, and
// loses it when the key leaves the list - all without a restart.
func (s *suite) testInfraNodeLabels(t *testing.T) {
	ctx := t.Context()
	// Every infra node carries the labels, so wherever the VM runs.
	setRack := func(ctx context.Context, rack string) {
		t.Helper()
		for _, name := range infraNodes {
			infraNode := &corev1.Node{}
			if err := s.infra.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Name: name}, infraNode); err != nil {
				t.Fatal(err)
			}
			base := infraNode.DeepCopy()
			if rack == "" {
				delete(infraNode.Labels, "example.com/rack")
				delete(infraNode.Labels, "example.com/other")
			} else {
				infraNode.Labels["example.com/rack"], infraNode.Labels["example.com/other"] = rack, "x"
			}
			if err := s.infra.Client.Patch(ctx, infraNode, ctrlruntimeclient.MergeFrom(base)); err != nil {
				t.Fatal(err)
			}
		}
	}
	setRack(ctx, "r1")
	t.Cleanup(func() { setRack(context.Background(), "") })
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: machineNamespace, Name: infraNodeLabelsConfigMap},
		Data: map[string]string{machine.InfraNodeLabelsKey: "example.com/rack"}}
	if err := s.user.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.user.Client.Delete(ctx, cm) })

	ms := s.createMachineSet(t, "racked", providerSpec)
	machines := s.waitForReplicas(t, ms, 1)
	nodeName := machines[0].Status.NodeRef.Name
	nodeLabel := func(want string) {
		t.Helper()
		waitFor(t, timeout, fmt.Sprintf("Node label example.com/rack=%q", want), func() (bool, string) {
			node := &corev1.Node{}
			if err := s.user.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Name: nodeName}, node); err != nil {
				return false, err.Error()
			}
			got, ok := node.Labels["example.com/rack"]
			if _, other := node.Labels["example.com/other"]; other {
				return false, "a label not on the list was copied"
			}
			return (want == "" && !ok) || (want != "" && got == want), fmt.Sprintf("labels %v", node.Labels)
		})
	}
	nodeLabel("r1")

	setRack(ctx, "r2")
	nodeLabel("r2")

	cm.Data[machine.InfraNodeLabelsKey] = "example.com/zone-less, "
	if err := s.user.Client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	nodeLabel("")

	s.deleteAndWait(t, ms)
}
