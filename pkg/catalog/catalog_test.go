package catalog

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"
)

// unservedReader answers like an API server without KubeVirt, CDI and
// Multus: their kinds have no REST mapping.
type unservedReader struct{ ctrlruntimeclient.Reader }

func (r unservedReader) List(ctx context.Context, list ctrlruntimeclient.ObjectList, opts ...ctrlruntimeclient.ListOption) error {
	if u, ok := list.(*unstructured.UnstructuredList); ok {
		gvk := u.GroupVersionKind()
		return &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
	}
	return r.Reader.List(ctx, list, opts...)
}

// TestListWithoutKubeVirt: on an infra cluster without KubeVirt, CDI or
// Multus the storage classes are still listed and the missing kinds are
// named instead of failing.
func TestListWithoutKubeVirt(t *testing.T) {
	c := unservedReader{fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "beta-default",
			Annotations: map[string]string{"storageclass.beta.kubernetes.io/is-default-class": "true"}}, Provisioner: "p"},
	).Build()}
	cat, err := List(t.Context(), c, "cluster-a")
	if err != nil {
		t.Fatal(err)
	}
	wantNotServed := []string{
		"VirtualMachineInstancePreset.kubevirt.io",
		"VirtualMachineInstancetype.instancetype.kubevirt.io", "VirtualMachineClusterInstancetype.instancetype.kubevirt.io",
		"VirtualMachinePreference.instancetype.kubevirt.io", "VirtualMachineClusterPreference.instancetype.kubevirt.io",
		"DataVolume.cdi.kubevirt.io", "NetworkAttachmentDefinition.k8s.cni.cncf.io",
	}
	if diff := cmp.Diff(wantNotServed, cat.NotServed); diff != "" {
		t.Errorf("not served (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]StorageClass{{Name: "beta-default", Provisioner: "p", Default: true}}, cat.StorageClasses); diff != "" {
		t.Errorf("storage classes (-want +got):\n%s", diff)
	}

	var table, asYAML bytes.Buffer
	if err := Write(&table, cat, "table"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "Not served by the infra cluster: VirtualMachineInstancePreset.kubevirt.io") {
		t.Errorf("the table does not name what is not served:\n%s", table.String())
	}
	if err := Write(&asYAML, cat, "yaml"); err != nil {
		t.Fatal(err)
	}
	var back Catalog
	if err := yaml.Unmarshal(asYAML.Bytes(), &back); err != nil || back.Namespace != "cluster-a" {
		t.Errorf("YAML round trip: %v, %+v", err, back)
	}
	if err := (Options{Reader: c, Namespace: "cluster-a", Format: "xml", Out: &table}).Run(t.Context()); err == nil {
		t.Error("an unknown format was accepted")
	}
}
