package flavors

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kinds handled by the controller. Objects are handled as unstructured so
// the controller needs no Go types and compares exactly what the API server
// stores.
var (
	// PresetGVK is the KubeVirt VirtualMachineInstancePreset.
	PresetGVK = schema.GroupVersionKind{Group: "kubevirt.io", Version: "v1", Kind: "VirtualMachineInstancePreset"}
	// InstancetypeGVK is the namespaced VirtualMachineInstancetype.
	InstancetypeGVK = schema.GroupVersionKind{Group: "instancetype.kubevirt.io", Version: "v1beta1", Kind: "VirtualMachineInstancetype"}
	// PreferenceGVK is the namespaced VirtualMachinePreference.
	PreferenceGVK = schema.GroupVersionKind{Group: "instancetype.kubevirt.io", Version: "v1beta1", Kind: "VirtualMachinePreference"}
)

// StandardPresetName is the preset offered in every tenant namespace even
// when the source namespace has none.
const StandardPresetName = "kubermatic-standard"

// StandardPreset returns the built-in kubermatic-standard preset: 2 CPUs
// and 8Gi of memory as requests and limits, applied to VMIs labelled
// kubevirt.io/flavor=kubermatic-standard.
func StandardPreset() *unstructured.Unstructured {
	resources := map[string]any{"cpu": "2", "memory": "8Gi"}
	return newObject(PresetGVK, StandardPresetName, map[string]any{
		"selector": map[string]any{
			"matchLabels": map[string]any{"kubevirt.io/flavor": StandardPresetName},
		},
		"domain": map[string]any{
			"resources": map[string]any{
				"requests": resources,
				"limits":   copyMap(resources),
			},
		},
	})
}

// StandardInstancetypes returns standard-2 (2 vCPUs, 8Gi), standard-4 (4,
// 16Gi) and standard-8 (8, 32Gi).
func StandardInstancetypes() []*unstructured.Unstructured {
	sizes := []struct {
		name   string
		cpus   int64
		memory string
	}{
		{name: "standard-2", cpus: 2, memory: "8Gi"},
		{name: "standard-4", cpus: 4, memory: "16Gi"},
		{name: "standard-8", cpus: 8, memory: "32Gi"},
	}
	out := make([]*unstructured.Unstructured, 0, len(sizes))
	for _, s := range sizes {
		out = append(out, newObject(InstancetypeGVK, s.name, map[string]any{
			"cpu":    map[string]any{"guest": s.cpus},
			"memory": map[string]any{"guest": s.memory},
		}))
	}
	return out
}

// StandardPreferences returns sockets-advantage, which prefers a topology
// of one core per socket.
func StandardPreferences() []*unstructured.Unstructured {
	return []*unstructured.Unstructured{newObject(PreferenceGVK, "sockets-advantage", map[string]any{
		"cpu": map[string]any{"preferredCPUTopology": "preferSockets"},
	})}
}

func newObject(gvk schema.GroupVersionKind, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(gvk)
	u.SetName(name)
	return u
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
