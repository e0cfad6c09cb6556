package flavors

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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

func TestUpToDate(t *testing.T) {
	want := Desired(Options{Presets: true}, nil)[PresetGVK][StandardPresetName]
	for _, tc := range []struct {
		name   string
		change func(u *unstructured.Unstructured)
		want   bool
	}{
		{name: "identical", change: func(*unstructured.Unstructured) {}, want: true},
		{name: "other metadata and status are ignored", change: func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{"a": "b"})
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
			if got := upToDate(have, want); got != tc.want {
				t.Errorf("upToDate = %v, want %v", got, tc.want)
			}
		})
	}
}
