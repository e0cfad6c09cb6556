package machinedeployment

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8c.io/machine-controller/sdk/apis/cluster/common"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// The cluster autoscaler's clusterapi provider scales a node group up from
// zero replicas only when the MachineDeployment tells what a Node of it
// would have. The controller keeps these annotations on every
// MachineDeployment (values as the autoscaler parses them: quantities,
// integers, "key=value,…" labels and "key=value:Effect,…" taints).
const (
	// AnnotationCapacityCPU holds the CPUs of a Node.
	AnnotationCapacityCPU = capacityPrefix + "cpu"
	// AnnotationCapacityMemory holds the memory of a Node.
	AnnotationCapacityMemory = capacityPrefix + "memory"
	// AnnotationCapacityEphemeralDisk holds the ephemeral storage of a Node.
	AnnotationCapacityEphemeralDisk = capacityPrefix + "ephemeral-disk"
	// AnnotationCapacityGPUType holds the extended resource of its GPUs.
	AnnotationCapacityGPUType = capacityPrefix + "gpu-type"
	// AnnotationCapacityGPUCount holds the number of its GPUs.
	AnnotationCapacityGPUCount = capacityPrefix + "gpu-count"
	// AnnotationCapacityMaxPods holds the kubelet's maxPods.
	AnnotationCapacityMaxPods = capacityPrefix + "maxPods"
	// AnnotationCapacityLabels holds the labels of a Node.
	AnnotationCapacityLabels = capacityPrefix + "labels"
	// AnnotationCapacityTaints holds the taints of a Node.
	AnnotationCapacityTaints = capacityPrefix + "taints"

	capacityPrefix = "capacity.cluster-autoscaler.kubernetes.io/"

	// AnnotationCapacityManaged records, as a JSON object from annotation
	// name to value, the capacity annotations the controller wrote. An
	// annotation is the controller's while its value is the recorded one
	// (or while it is absent); any other value was set by someone else and
	// is left alone.
	AnnotationCapacityManaged = "machinedeployment.kkp-kubevirt.io/capacity-managed"
)

// capacityKeys are the annotations the controller may write.
var capacityKeys = []string{
	AnnotationCapacityCPU, AnnotationCapacityMemory, AnnotationCapacityEphemeralDisk,
	AnnotationCapacityGPUType, AnnotationCapacityGPUCount, AnnotationCapacityMaxPods,
	AnnotationCapacityLabels, AnnotationCapacityTaints,
}

// defaultMaxPods is the kubelet's maxPods when the MachineDeployment sets
// none.
const defaultMaxPods = 110

// annotationMaxPods is the kubelet configuration Kubermatic (and its
// operating-system-manager, which writes the kubelet configuration) reads
// from a MachineDeployment's annotations.
const annotationMaxPods = common.KubeletConfigAnnotationPrefixV1 + "/" + common.MaxPodsKubeletConfig

// capacityAnnotations returns the capacity annotations of md from what
// the provider tells about its Nodes (c) and what the template itself
// gives them: the labels of spec.template.spec.metadata.labels (over the
// provider's), the taints of spec.template.spec.taints and the kubelet's
// maxPods. What is unknown has no annotation.
func capacityAnnotations(md *clusterv1alpha1.MachineDeployment, c cloudprovider.NodeCapacity) map[string]string {
	out := map[string]string{AnnotationCapacityMaxPods: strconv.Itoa(maxPodsOf(md))}
	for key, q := range map[string]*resource.Quantity{
		AnnotationCapacityCPU:           c.CPU,
		AnnotationCapacityMemory:        c.Memory,
		AnnotationCapacityEphemeralDisk: c.EphemeralStorage,
	} {
		if q != nil {
			out[key] = q.String()
		}
	}
	if c.GPUType != "" && c.GPUCount > 0 {
		out[AnnotationCapacityGPUType] = c.GPUType
		out[AnnotationCapacityGPUCount] = strconv.FormatInt(c.GPUCount, 10)
	}
	labels := maps.Clone(c.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, md.Spec.Template.Spec.Labels)
	if len(labels) > 0 {
		pairs := make([]string, 0, len(labels))
		for _, k := range slices.Sorted(maps.Keys(labels)) {
			pairs = append(pairs, k+"="+labels[k])
		}
		out[AnnotationCapacityLabels] = strings.Join(pairs, ",")
	}
	if taints := md.Spec.Template.Spec.Taints; len(taints) > 0 {
		specs := make([]string, 0, len(taints))
		for _, t := range taints {
			specs = append(specs, taintSpec(t))
		}
		out[AnnotationCapacityTaints] = strings.Join(specs, ",")
	}
	return out
}

// maxPodsOf returns the kubelet's maxPods of md's Nodes: the Kubermatic
// kubelet configuration annotation when it holds a positive integer, else
// the kubelet's default.
func maxPodsOf(md *clusterv1alpha1.MachineDeployment) int {
	if n, err := strconv.Atoi(md.Annotations[annotationMaxPods]); err == nil && n > 0 {
		return n
	}
	return defaultMaxPods
}

// taintSpec writes a taint as the autoscaler reads it: key=value:Effect,
// or key:Effect without a value.
func taintSpec(t corev1.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

// applyCapacity writes want into annotations (a copy of md's) where the
// annotation is the controller's: absent, or holding the value
// AnnotationCapacityManaged records. A value someone else set is kept and
// no longer recorded. Annotations of the controller that want lacks are
// removed. The record is rewritten, and removed when it is empty.
func applyCapacity(annotations, want map[string]string) {
	recorded := map[string]string{}
	// A record that does not parse (edited by hand) claims nothing.
	_ = json.Unmarshal([]byte(annotations[AnnotationCapacityManaged]), &recorded)
	record := map[string]string{}
	for _, key := range capacityKeys {
		current, present := annotations[key]
		if previous, ours := recorded[key]; present && (!ours || previous != current) {
			continue
		}
		value, wanted := want[key]
		if !wanted {
			delete(annotations, key)
			continue
		}
		annotations[key] = value
		record[key] = value
	}
	if len(record) == 0 {
		delete(annotations, AnnotationCapacityManaged)
		return
	}
	// A map of strings always encodes, with its keys sorted.
	raw, _ := json.Marshal(record)
	annotations[AnnotationCapacityManaged] = string(raw)
}

// noteCapacity updates the capacity annotations in annotations (a copy of
// md's) from the provider. When the provider cannot tell now (the infra
// cluster is unreachable, the spec is invalid), the annotations stay as
// they are: the MachineDeployment's next reconcile asks again.
func (r *reconciler) noteCapacity(ctx context.Context, md *clusterv1alpha1.MachineDeployment, annotations map[string]string) {
	if r.capacity == nil {
		return
	}
	c, err := r.capacity.TemplateCapacity(ctx, md.Spec.Template.Spec)
	if err != nil {
		log.FromContext(ctx).Info("keeping the capacity annotations of the MachineDeployment: its capacity cannot be read now", "error", err.Error())
		return
	}
	applyCapacity(annotations, capacityAnnotations(md, c))
}
