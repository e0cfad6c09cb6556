package flavors

import (
	"fmt"

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
		// KubeVirt's schema requires devices, which its Go types always
		// write; an empty one adds none.
		"domain": map[string]any{
			"devices": map[string]any{},
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

// instancetypeSizes are the sizes of every built-in instancetype series:
// guest vCPUs and, per series, a memory factor in GiB per vCPU.
var instancetypeSizes = []int64{2, 4, 8}

// PerformanceInstancetypes returns performance-2, -4 and -8 (2, 4, 8
// vCPUs with 4Gi per vCPU), high-performance templates:
// vCPUs pinned to dedicated host CPUs with the emulator thread on a CPU of
// its own, guest memory on 2Mi huge pages and disk I/O on a shared I/O
// thread. They need infra nodes with the CPU manager's static policy and
// 2Mi huge pages.
func PerformanceInstancetypes() []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(instancetypeSizes))
	for _, cpus := range instancetypeSizes {
		out = append(out, newObject(InstancetypeGVK, fmt.Sprintf("performance-%d", cpus), map[string]any{
			"cpu":             map[string]any{"guest": cpus, "dedicatedCPUPlacement": true, "isolateEmulatorThread": true},
			"memory":          map[string]any{"guest": fmt.Sprintf("%dGi", 4*cpus), "hugepages": map[string]any{"pageSize": "2Mi"}},
			"ioThreadsPolicy": "shared",
		}))
	}
	return out
}

// DensityInstancetypes returns density-2, -4 and -8 (2, 4, 8 vCPUs with
// 2Gi per vCPU), high-density (oversubscribed) templates: no
// dedicated CPUs, so KubeVirt's cpuAllocationRatio oversubscribes them,
// and a launcher pod that requests a quarter less memory than the guest
// sees (memory.overcommitPercent 25).
func DensityInstancetypes() []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(instancetypeSizes))
	for _, cpus := range instancetypeSizes {
		out = append(out, newObject(InstancetypeGVK, fmt.Sprintf("density-%d", cpus), map[string]any{
			"cpu":    map[string]any{"guest": cpus},
			"memory": map[string]any{"guest": fmt.Sprintf("%dGi", 2*cpus), "overcommitPercent": int64(25)},
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
