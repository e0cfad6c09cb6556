package envtest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// TestClusterCRDSchemas checks that the cluster.k8s.io CRDs carry the
// structural schemas generated from the SDK types: fields the SDK does not
// know are pruned, while the providerSpec value, the embedded Node metadata
// and the known fields are stored as written.
func TestClusterCRDSchemas(t *testing.T) {
	env := Start(t, WithCRDFiles("cluster.k8s.io.yaml"))
	ctx := t.Context()
	ns := env.CreateNamespace(t, "crd")
	providerSpec := map[string]any{"cloudProvider": "kubevirt", "cloudProviderSpec": map[string]any{"anything": "goes"}}
	machine := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.k8s.io/v1alpha1",
		"kind":       "Machine",
		"metadata":   map[string]any{"name": "m", "namespace": ns},
		"spec": map[string]any{
			"metadata":     map[string]any{"labels": map[string]any{"role": "worker"}},
			"providerSpec": map[string]any{"value": providerSpec},
			"versions":     map[string]any{"kubelet": "1.36.3"},
			"unknownField": "pruned",
		},
	}}
	if err := env.Client.Create(ctx, machine); err != nil {
		t.Fatal(err)
	}
	got := &unstructured.Unstructured{}
	got.SetAPIVersion("cluster.k8s.io/v1alpha1")
	got.SetKind("Machine")
	if err := env.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(machine), got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"metadata":     map[string]any{"labels": map[string]any{"role": "worker"}},
		"providerSpec": map[string]any{"value": providerSpec},
		"versions":     map[string]any{"kubelet": "1.36.3"},
	}
	if diff := cmp.Diff(want, got.Object["spec"]); diff != "" {
		t.Errorf("stored spec (-want +got):\n%s", diff)
	}

	// An invalid deletePolicy is refused by the enum of the schema.
	ms := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.k8s.io/v1alpha1",
		"kind":       "MachineSet",
		"metadata":   map[string]any{"name": "ms", "namespace": ns},
		"spec":       map[string]any{"deletePolicy": "Largest"},
	}}
	if err := env.Client.Create(ctx, ms); err == nil {
		t.Error("a MachineSet with deletePolicy Largest was accepted")
	}
}
