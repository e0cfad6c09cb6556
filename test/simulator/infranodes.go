package simulator

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// Names of the simulated infra nodes.
const (
	// NodeName is the first simulated infra node.
	NodeName = "infra-node-sim"
	// SecondNodeName is the second.
	SecondNodeName = "infra-node-sim-2"
)

// Region is the region of every simulated infra node; Zones are their
// zones, the i-th node of Options.Nodes in Zones[i%len(Zones)].
const Region = "region-sim"

// Zones are the zones the simulated infra nodes are spread over.
var Zones = []string{"zone-a", "zone-b", "zone-c"}

// ZoneOf returns the zone of the i-th infra node.
func ZoneOf(i int) string { return Zones[i%len(Zones)] }

// DefaultNodeCapacity is what every simulated infra node offers unless
// Options.NodeCapacity says otherwise: a large node (64 CPUs, 256 GiB, a
// kubelet's default of 110 pods), so that in the tests placement rules
// decide first, yet a finite one that kube-scheduler accounts for.
func DefaultNodeCapacity() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("64"),
		corev1.ResourceMemory:           resource.MustParse("256Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
		"devices.kubevirt.io/kvm":       resource.MustParse("1k"),
		"devices.kubevirt.io/tun":       resource.MustParse("1k"),
		"devices.kubevirt.io/vhost-net": resource.MustParse("1k"),
		"hugepages-2Mi":                 resource.MustParse("64Gi"),
	}
}

// createInfraNodes registers the infra nodes as their kubelets would, with
// their zone and region. KubeVirt's own labels come from the simulated
// virt-handlers.
func createInfraNodes(ctx context.Context, c ctrlruntimeclient.Client, names []string, capacity corev1.ResourceList) error {
	for i, name := range names {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			corev1.LabelHostname: name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
			corev1.LabelTopologyZone: ZoneOf(i), corev1.LabelTopologyRegion: Region,
		}}}
		status := corev1.NodeStatus{Capacity: capacity.DeepCopy(), Allocatable: capacity.DeepCopy()}
		if err := registerNode(ctx, c, node, hostIP(name), status); err != nil {
			return err
		}
	}
	return nil
}

// registerNode plays a kubelet registering its node (with the annotation a
// kubelet gives it; KubeVirt's node restriction policy fails on a node
// without any), and the node lifecycle controller that marks it Ready and
// removes the not-ready taint the API server gives a new node. A Ready node
// with the address is left alone.
func registerNode(ctx context.Context, c ctrlruntimeclient.Client, node *corev1.Node, ip string, status corev1.NodeStatus) error {
	metav1.SetMetaDataAnnotation(&node.ObjectMeta, "volumes.kubernetes.io/controller-managed-attach-detach", "true")
	err := c.Create(ctx, node)
	if apierrors.IsAlreadyExists(err) {
		err = c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(node), node)
	}
	if err != nil {
		return fmt.Errorf("failed to register node %s: %w", node.Name, err)
	}
	if !nodeReady(node) || len(node.Status.Addresses) == 0 || node.Status.Addresses[0].Address != ip {
		// A patch, as a kubelet sends: a controller that labels the
		// Node meanwhile does not make the report conflict.
		before := node.DeepCopy()
		now := metav1.Now()
		status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: node.Name}}
		status.Conditions = []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "simulated kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now,
		}}
		status.NodeInfo = corev1.NodeSystemInfo{KubeletVersion: KubeletVersion, OperatingSystem: "linux", Architecture: "amd64"}
		node.Status = status
		if err := c.Status().Patch(ctx, node, ctrlruntimeclient.MergeFrom(before)); err != nil {
			return fmt.Errorf("failed to report node %s ready: %w", node.Name, err)
		}
	}
	base := node.DeepCopy()
	node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeNotReady })
	if len(node.Spec.Taints) == len(base.Spec.Taints) {
		return nil
	}
	if err := c.Patch(ctx, node, ctrlruntimeclient.MergeFrom(base)); err != nil {
		return fmt.Errorf("failed to untaint node %s: %w", node.Name, err)
	}
	return nil
}

// hostIP is the address of a simulated infra node: stable for its name.
func hostIP(node string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(node))
	return fmt.Sprintf("192.168.100.%d", h.Sum32()%250+2)
}
