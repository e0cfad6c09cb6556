package flavors

import (
	"bytes"
	"encoding/json"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kptr "k8s.io/utils/ptr"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/apply"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

func source(name string, labels map[string]string, cpu string) unstructured.Unstructured {
	u := newObject(PresetGVK, name, map[string]any{"domain": map[string]any{"cpu": map[string]any{"cores": cpu}}})
	u.SetNamespace(DefaultSourceNamespace)
	u.SetLabels(labels)
	return *u
}

func names(set Set) map[string][]string {
	out := map[string][]string{}
	for gvk, objs := range set {
		for name := range objs {
			out[gvk.Kind] = append(out[gvk.Kind], name)
		}
		sort.Strings(out[gvk.Kind])
	}
	return out
}

func TestDesired(t *testing.T) {
	deleting := source("going", nil, "1")
	now := metav1.Now()
	deleting.SetDeletionTimestamp(&now)
	sources := []unstructured.Unstructured{source("custom", map[string]string{"team": "a"}, "4"), deleting}
	for _, tc := range []struct {
		name    string
		options Options
		sources []unstructured.Unstructured
		want    map[string][]string
	}{
		{
			name:    "everything on",
			options: Options{Presets: true, Instancetypes: true, Preferences: true},
			sources: sources,
			want: map[string][]string{
				"VirtualMachineInstancePreset": {"custom", "kubermatic-standard"},
				"VirtualMachineInstancetype":   {"standard-2", "standard-4", "standard-8"},
				"VirtualMachinePreference":     {"sockets-advantage"},
			},
		},
		{
			name:    "performance and density series without the standard one",
			options: Options{PerformanceInstancetypes: true, DensityInstancetypes: true},
			want: map[string][]string{"VirtualMachineInstancetype": {
				"density-2", "density-4", "density-8", "performance-2", "performance-4", "performance-8"}},
		},
		{
			name:    "presets only, with an empty source namespace",
			options: Options{Presets: true},
			want:    map[string][]string{"VirtualMachineInstancePreset": {"kubermatic-standard"}},
		},
		{
			name:    "everything off ignores the sources",
			options: Options{},
			sources: sources,
			want:    map[string][]string{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, names(Desired(tc.options, tc.sources))); diff != "" {
				t.Errorf("desired names (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDesiredCopy(t *testing.T) {
	src := source("custom", map[string]string{"team": "a"}, "4")
	got := Desired(Options{Presets: true}, []unstructured.Unstructured{src})[PresetGVK]["custom"]
	wantLabels := map[string]string{"team": "a", tenant.ManagedByLabel: tenant.ManagedByValue}
	if diff := cmp.Diff(wantLabels, got.GetLabels()); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(src.Object["spec"], got.Object["spec"]); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	if src.GetLabels()[tenant.ManagedByLabel] != "" {
		t.Error("Desired labelled the source object")
	}
	got.Object["spec"].(map[string]any)["domain"] = "changed"
	if _, ok := src.Object["spec"].(map[string]any)["domain"].(map[string]any); !ok {
		t.Error("the copy shares its spec with the source")
	}
}

func TestDesiredSourceOverridesBuiltin(t *testing.T) {
	src := source(StandardPresetName, nil, "16")
	got := Desired(Options{Presets: true}, []unstructured.Unstructured{src})[PresetGVK][StandardPresetName]
	if diff := cmp.Diff(src.Object["spec"], got.Object["spec"]); diff != "" {
		t.Errorf("kubermatic-standard spec (-want source +got):\n%s", diff)
	}
}

// TestCopyHolds: a copy as the API server keeps it holds what we write;
// another label set or a changed spec does not.
func TestCopyHolds(t *testing.T) {
	want, err := apply.Desired(Desired(Options{Presets: true}, nil)[PresetGVK][StandardPresetName], nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(u *unstructured.Unstructured)
		want   bool
	}{
		{name: "identical", change: func(*unstructured.Unstructured) {}, want: true},
		{name: "other metadata and status are ignored", change: func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{"a": "b", apply.HashAnnotation: want.GetAnnotations()[apply.HashAnnotation]})
			u.SetResourceVersion("42")
			u.Object["status"] = map[string]any{"x": "y"}
		}, want: true},
		{name: "a label differs", change: func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"x": "y"}) }},
		{name: "the spec differs", change: func(u *unstructured.Unstructured) {
			u.Object["spec"].(map[string]any)["selector"] = map[string]any{}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			have := want.DeepCopy()
			tc.change(have)
			got, err := apply.Holds(have, want)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Holds = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestBuiltinsAreKubeVirtTypes decodes every built-in object strictly into
// KubeVirt's own Go types, so a misspelt field fails here rather than being
// pruned by the API server.
func TestBuiltinsAreKubeVirtTypes(t *testing.T) {
	all := append(append(StandardInstancetypes(), PerformanceInstancetypes()...), DensityInstancetypes()...)
	for _, obj := range all {
		raw, err := json.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		var it instancetypev1beta1.VirtualMachineInstancetype
		if err := dec.Decode(&it); err != nil {
			t.Errorf("%s is no VirtualMachineInstancetype: %v", obj.GetName(), err)
		}
	}
	perf := PerformanceInstancetypes()[1]
	var it instancetypev1beta1.VirtualMachineInstancetype
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(perf.Object, &it); err != nil {
		t.Fatal(err)
	}
	if it.Spec.CPU.Guest != 4 || !kptr.Deref(it.Spec.CPU.DedicatedCPUPlacement, false) || it.Spec.Memory.Hugepages == nil ||
		kptr.Deref(it.Spec.IOThreadsPolicy, "") != "shared" {
		t.Errorf("performance-4: %+v", it.Spec)
	}
}
