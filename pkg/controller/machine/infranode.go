package machine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/remote/outage"
)

// AnnotationInfraNodeLabels records on a Node the keys of the labels copied
// to it from the infra node its VM runs on, so that a key taken off the
// list, or off the infra node, is removed from the Node again.
const AnnotationInfraNodeLabels = "kkp-kubevirt.io/infra-node-labels"

// InfraNodeLabelsKey is the key of the ConfigMap (Options.InfraNodeLabels)
// that lists the label keys to copy, separated by commas or line breaks.
const InfraNodeLabelsKey = "labels"

// indexVMINode indexes the infra cache's VMIs by status.nodeName.
const indexVMINode = "status.nodeName"

// infraNodeLabels copies labels of infra nodes to the Nodes of the VMs
// running there, so user cluster workloads can be placed by infra cluster
// topology. The keys come from one ConfigMap of the user cluster, read
// through a cache of just that object, so a change applies without a
// restart and reaches every Machine at once. The infra side is read through
// each Machine's own infra client, and the infra Nodes are watched per
// infra namespace (see infraWatches).
type infraNodeLabels struct {
	configMap types.NamespacedName
	configs   cache.Cache
}

// newInfraNodeLabels sets up the ConfigMap cache and its watch, which
// enqueues every Machine.
func newInfraNodeLabels(mgr ctrl.Manager, b *builder.Builder, configMap types.NamespacedName) (*infraNodeLabels, error) {
	configs, err := cache.New(mgr.GetConfig(), cache.Options{
		NewInformer: outage.NewInformer,
		Scheme:      mgr.GetScheme(),
		Mapper:      mgr.GetRESTMapper(),
		ByObject: map[ctrlruntimeclient.Object]cache.ByObject{&corev1.ConfigMap{}: {
			Namespaces: map[string]cache.Config{configMap.Namespace: {FieldSelector: fields.OneTermEqualSelector("metadata.name", configMap.Name)}},
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("failed to create the cache of ConfigMap %s: %w", configMap, err)
	}
	if err := mgr.Add(configs); err != nil {
		return nil, fmt.Errorf("failed to add the cache of ConfigMap %s: %w", configMap, err)
	}
	c := mgr.GetClient()
	all := func(ctx context.Context, _ *corev1.ConfigMap) []reconcile.Request {
		return machinesBy(ctx, c, nil, nil)
	}
	b.WatchesRawSource(source.Kind(configs, &corev1.ConfigMap{}, handler.TypedEnqueueRequestsFromMapFunc(all)))
	return &infraNodeLabels{configMap: configMap, configs: configs}, nil
}

// keys returns the label keys the ConfigMap lists (none without it).
// Invalid ones are left out and reported as a Warning event on the
// ConfigMap, where whoever edits it looks.
func (l *infraNodeLabels) keys(ctx context.Context, recorder events.EventRecorder) ([]string, error) {
	var cm corev1.ConfigMap
	if err := l.configs.Get(ctx, l.configMap, &cm); err != nil {
		return nil, ctrlruntimeclient.IgnoreNotFound(err)
	}
	keys, err := ParseLabelKeys(cm.Data[InfraNodeLabelsKey])
	if err != nil {
		recorder.Eventf(&cm, nil, corev1.EventTypeWarning, ReasonInvalidLabelKeys, "CopyInfraNodeLabels", "%v; the valid ones are copied", err)
	}
	return keys, nil
}

// infraNodeLabelsOf returns the labels to copy to the Node of the Machine
// of s, and whether they are known now; nothing when the copy is off or
// the instance names no infra client.
func (r *reconciler) infraNodeLabelsOf(ctx context.Context, s *scope) (map[string]string, bool, error) {
	if r.infraLabels == nil || s.infra == nil {
		return nil, false, nil
	}
	keys, err := r.infraLabels.keys(ctx, r.recorder)
	if err != nil {
		return nil, false, err
	}
	return infraLabelsWanted(ctx, s.infra, s.machine.Name, keys)
}

// ParseLabelKeys reads label keys separated by commas or line breaks;
// blanks are ignored, duplicates dropped. Invalid keys are left out and
// named in the error.
func ParseLabelKeys(s string) ([]string, error) {
	var keys, invalid []string
	for _, k := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		k = strings.TrimSpace(k)
		switch {
		case k == "" || slices.Contains(keys, k):
		case len(validation.IsQualifiedName(k)) > 0:
			invalid = append(invalid, k)
		default:
			keys = append(keys, k)
		}
	}
	if len(invalid) > 0 {
		return keys, fmt.Errorf("invalid label keys in %s: %s", InfraNodeLabelsKey, strings.Join(invalid, ", "))
	}
	return keys, nil
}

// infraLabelsWanted returns the labels the Node of the Machine called name
// should carry from its VM's infra node, read through the Machine's infra
// client, and false when that is not known now (no VMI in the cache yet,
// not scheduled, infra node not cached).
func infraLabelsWanted(ctx context.Context, infraClient *infra.Client, name string, keys []string) (map[string]string, bool, error) {
	var vmi kubevirtcorev1.VirtualMachineInstance
	if err := infraClient.Reader.Get(ctx, types.NamespacedName{Namespace: infraClient.Namespace, Name: name}, &vmi); err != nil {
		return nil, false, ctrlruntimeclient.IgnoreNotFound(err)
	}
	if vmi.Status.NodeName == "" {
		return nil, false, nil
	}
	var node corev1.Node
	if err := infraClient.Reader.Get(ctx, types.NamespacedName{Name: vmi.Status.NodeName}, &node); err != nil {
		return nil, false, ctrlruntimeclient.IgnoreNotFound(err)
	}
	out := map[string]string{}
	for _, k := range keys {
		if v, ok := node.Labels[k]; ok {
			out[k] = v
		}
	}
	return out, true, nil
}

// syncInfraLabels sets want on node and removes the labels an earlier sync
// copied that want no longer holds; AnnotationInfraNodeLabels tracks them.
// It reports whether node changed.
func syncInfraLabels(node *corev1.Node, want map[string]string) bool {
	changed := mergeInto(&node.Labels, want)
	for _, k := range strings.Split(node.Annotations[AnnotationInfraNodeLabels], ",") {
		if _, keep := want[k]; !keep && k != "" {
			if _, ok := node.Labels[k]; ok {
				delete(node.Labels, k)
				changed = true
			}
		}
	}
	record := strings.Join(slices.Sorted(maps.Keys(want)), ",")
	if node.Annotations[AnnotationInfraNodeLabels] != record {
		if record == "" {
			delete(node.Annotations, AnnotationInfraNodeLabels)
		} else {
			mergeInto(&node.Annotations, map[string]string{AnnotationInfraNodeLabels: record})
		}
		changed = true
	}
	return changed
}
