package simulator

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// heartbeatInterval is how often virt-handler reports its node alive.
const heartbeatInterval = time.Minute

// simulatedCPUModel is the CPU model of every simulated infra node.
const simulatedCPUModel = "Skylake-Client-IBRS"

// nodeLabels are the labels virt-handler and its node labeller put on a node
// they serve: schedulable for VMs, the CPU manager's static policy, the q35
// machine type, and one CPU model that every node shares, so VMs of any CPU
// mode may run and migrate anywhere.
var nodeLabels = map[string]string{
	"kubevirt.io/schedulable":                                   "true",
	"kubevirt.io/cpumanager":                                    "true",
	"cpumanager":                                                "true",
	"machine-type.node.kubevirt.io/q35":                         "true",
	"cpu-vendor.node.kubevirt.io/Intel":                         "true",
	"cpu-model.node.kubevirt.io/" + simulatedCPUModel:           "true",
	"host-model-cpu.node.kubevirt.io/" + simulatedCPUModel:      "true",
	"cpu-model-migration.node.kubevirt.io/" + simulatedCPUModel: "true",
}

// handlerNode is virt-handler's work on its own node: labels, and the
// heartbeat annotation virt-controller checks, renewed every minute.
type handlerNode struct {
	node   string
	client ctrlruntimeclient.Client // as the node's virt-handler
}

// Start runs until ctx ends.
func (h *handlerNode) Start(ctx context.Context) error {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := h.beat(ctx); err != nil && ctx.Err() == nil {
			// The next beat tries again, as virt-handler does.
			log.FromContext(ctx).Error(err, "simulated virt-handler heartbeat failed", "node", h.node)
		}
	}, heartbeatInterval)
	return nil
}

// beat patches the node's labels and heartbeat.
func (h *handlerNode) beat(ctx context.Context) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: h.node}}
	stamp, err := metav1.Now().Rfc3339Copy().MarshalJSON()
	if err != nil {
		return err
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      nodeLabels,
		"annotations": map[string]string{"kubevirt.io/heartbeat": string(stamp[1 : len(stamp)-1])},
	}})
	if err != nil {
		return err
	}
	if err := h.client.Patch(ctx, node, ctrlruntimeclient.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("failed to report node %s alive: %w", h.node, err)
	}
	return nil
}
