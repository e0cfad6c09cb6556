package csinodeplugin

import (
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/apply"
)

// TestRenderedHolds renders the node plugin and stores every object typed,
// as a tenant watch cache holds it: each holds what is written, so an
// unchanged tenant cluster costs no request; a hand edit does not. (The
// defaults an API server adds are covered by the envtest of the
// controller.)
func TestRenderedHolds(t *testing.T) {
	objs, err := addons.Render(addons.KubeVirtCSI, addons.Params{ClusterID: "a", InfraNamespace: "cluster-a"})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		want, err := apply.Desired(obj, nil)
		if err != nil {
			t.Fatal(err)
		}
		stored := storedAs(t, want)
		if holds, err := apply.Holds(stored, want); err != nil || !holds {
			t.Errorf("%s %s as a cache holds it: holds %t, %v", obj.GetKind(), obj.GetName(), holds, err)
		}
		ds, ok := stored.(*appsv1.DaemonSet)
		if !ok {
			continue
		}
		ds.Spec.Template.Spec.Containers[0].Image = "example.com/edited:v0"
		if holds, _ := apply.Holds(ds, want); holds {
			t.Errorf("DaemonSet %s with an image edited by hand holds what is written", ds.Name)
		}
	}
}

// storedAs turns a rendered object into its typed form, as a cache holds
// it.
func storedAs(t *testing.T, obj *unstructured.Unstructured) ctrlruntimeclient.Object {
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
	out, ok := typed.(ctrlruntimeclient.Object)
	if !ok {
		t.Fatalf("%s is not an object", obj.GroupVersionKind())
	}
	return out
}
