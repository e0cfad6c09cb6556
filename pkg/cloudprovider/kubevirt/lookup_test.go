package kubevirt

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// versionReader finds objects only in the given version, as the reader of an
// infra cluster that serves no other.
type versionReader struct {
	ctrlruntimeclient.Reader
	version string
}

func (r versionReader) Get(_ context.Context, key ctrlruntimeclient.ObjectKey, obj ctrlruntimeclient.Object, _ ...ctrlruntimeclient.GetOption) error {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if gvk.Version != r.version {
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, key.Name)
	}
	return nil
}

// TestLookupKindFallsBackToV1alpha1 covers infra clusters older than the
// KubeVirt the tests run, which serve instancetypes only in v1alpha1 (KubeVirt
// v1.9 serves only v1beta1, so no test control plane can).
func TestLookupKindFallsBackToV1alpha1(t *testing.T) {
	for _, version := range []string{"v1beta1", "v1alpha1"} {
		got, err := lookupKind(t.Context(), versionReader{version: version}, "ns", instancetypeKinds, "", "small")
		if err != nil || got != instancetypeKinds.namespaced {
			t.Errorf("%s only: got %q, %v; want %s", version, got, err, instancetypeKinds.namespaced)
		}
	}
	got, err := lookupKind(t.Context(), versionReader{version: "v2"}, "ns", instancetypeKinds, "", "small")
	if err != nil || got != "" {
		t.Errorf("neither version: got %q, %v; want not found", got, err)
	}
}
