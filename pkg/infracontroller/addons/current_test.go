package addons

import (
	"encoding/json"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
)

func TestContains(t *testing.T) {
	for _, tc := range []struct {
		name       string
		live, want any
		expected   bool
	}{
		{name: "equal scalars", live: "a", want: "a", expected: true},
		{name: "different scalars", live: "a", want: "b"},
		{name: "numbers of different decodings", live: int64(3), want: float64(3), expected: true},
		{name: "a number is not a string", live: "3", want: int64(3)},
		{name: "extra live fields are fine", live: map[string]any{"a": "1", "b": "2"}, want: map[string]any{"a": "1"}, expected: true},
		{name: "a missing field", live: map[string]any{"b": "2"}, want: map[string]any{"a": "1"}},
		{name: "lists element by element", live: []any{map[string]any{"x": "1", "d": "y"}}, want: []any{map[string]any{"x": "1"}}, expected: true},
		{name: "a list of another length", live: []any{"a", "b"}, want: []any{"a"}},
		{name: "an empty map wanted, none there", live: nil, want: map[string]any{}, expected: true},
		{name: "nested difference", live: map[string]any{"s": map[string]any{"n": int64(1)}}, want: map[string]any{"s": map[string]any{"n": int64(2)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := contains(tc.live, tc.want); got != tc.expected {
				t.Errorf("contains(%v, %v) = %t, want %t", tc.live, tc.want, got, tc.expected)
			}
		})
	}
}

// TestStale renders the node plugin, stores it typed, as a cache holds it,
// and expects nothing stale; a hand edit or a deletion makes exactly those
// objects stale. (The defaults an API server adds are covered by the
// envtest of the controller.)
func TestStale(t *testing.T) {
	objs, err := addons.Render(addons.KubeVirtCSI, addons.Params{ClusterID: "a", InfraNamespace: "cluster-a"})
	if err != nil {
		t.Fatal(err)
	}
	var stored []runtime.Object
	for _, obj := range objs {
		typed := storedAs(t, obj)
		stored = append(stored, typed)
	}
	reader := fake.NewClientBuilder().WithRuntimeObjects(stored...).Build()
	got, err := stale(t.Context(), reader, objs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("stale objects of an unchanged tenant: %v", names(got))
	}

	var ds appsv1.DaemonSet
	if err := reader.Get(t.Context(), keyOf("kubevirt-csi-driver", "kubevirt-csi-node"), &ds); err != nil {
		t.Fatal(err)
	}
	ds.Spec.Template.Spec.Containers[0].Image = "example.com/edited:v0"
	if err := reader.Update(t.Context(), &ds); err != nil {
		t.Fatal(err)
	}
	if err := reader.Delete(t.Context(), &corev1.ConfigMap{ObjectMeta: objectMeta("kubevirt-csi-driver", "driver-config")}); err != nil {
		t.Fatal(err)
	}
	got, err = stale(t.Context(), reader, objs)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ConfigMap/driver-config", "DaemonSet/kubevirt-csi-node"}; !slices.Equal(names(got), want) {
		t.Errorf("stale objects = %v, want %v", names(got), want)
	}
}

// storedAs turns a rendered object into its typed form, as a cache holds
// it.
func storedAs(t *testing.T, obj *unstructured.Unstructured) runtime.Object {
	t.Helper()
	typed, err := clientgoscheme.Scheme.New(obj.GroupVersionKind())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, typed); err != nil {
		t.Fatal(err)
	}
	return typed
}

func keyOf(namespace, name string) ctrlruntimeclient.ObjectKey {
	return ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: name}
}

func objectMeta(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name}
}

func names(objs []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, obj := range objs {
		out = append(out, obj.GetKind()+"/"+obj.GetName())
	}
	slices.Sort(out)
	return out
}
