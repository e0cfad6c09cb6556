package catalog

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
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
		namespace("cluster-a"),
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

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// TestRunNamespace: a namespace that does not exist on the infra cluster (a
// typo) fails, naming it and the tenant namespaces there when they can be
// listed; an existing empty namespace prints "none" everywhere and
// succeeds, and so does a reader that may not read namespaces at all (a
// kubeconfig scoped to the tenant namespace).
func TestRunNamespace(t *testing.T) {
	forbidden := func(resource string) error {
		return apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", errors.New("not allowed"))
	}
	cases := []struct {
		name       string
		namespaces []ctrlruntimeclient.Object
		// getErr and listErr fail the reads of namespaces.
		getErr, listErr error
		wantErr         []string
		notInErr        string
	}{
		{name: "exists but empty", namespaces: []ctrlruntimeclient.Object{namespace("cluster-a")}},
		{name: "namespaces forbidden", getErr: forbidden("namespaces")},
		{
			name:       "typo",
			namespaces: []ctrlruntimeclient.Object{namespace("cluster-b"), namespace("cluster-a"), namespace("kube-system"), namespace("cluster-")},
			wantErr:    []string{`namespace "cluster-typo" does not exist on the infra cluster`, "its cluster-* namespaces: cluster-a, cluster-b"},
			notInErr:   "kube-system",
		},
		{
			name:       "typo, no tenant namespaces",
			namespaces: []ctrlruntimeclient.Object{namespace("kube-system")},
			wantErr:    []string{`namespace "cluster-typo" does not exist`, "it has no cluster-* namespaces"},
		},
		{
			name:    "typo, listing forbidden",
			listErr: forbidden("namespaces"),
			wantErr: []string{`namespace "cluster-typo" does not exist`, "kubectl get namespaces"},
		},
		{name: "infra cluster fails", getErr: errors.New("connection refused"), wantErr: []string{"failed to get namespace cluster-typo", "connection refused"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(tc.namespaces...).
				WithInterceptorFuncs(interceptor.Funcs{
					Get: func(ctx context.Context, c ctrlruntimeclient.WithWatch, key ctrlruntimeclient.ObjectKey, obj ctrlruntimeclient.Object, opts ...ctrlruntimeclient.GetOption) error {
						if _, ok := obj.(*corev1.Namespace); ok && tc.getErr != nil {
							return tc.getErr
						}
						return c.Get(ctx, key, obj, opts...)
					},
					List: func(ctx context.Context, c ctrlruntimeclient.WithWatch, list ctrlruntimeclient.ObjectList, opts ...ctrlruntimeclient.ListOption) error {
						if _, ok := list.(*corev1.NamespaceList); ok && tc.listErr != nil {
							return tc.listErr
						}
						return c.List(ctx, list, opts...)
					},
				}).Build()
			ns := "cluster-typo"
			if tc.wantErr == nil {
				ns = "cluster-a"
			}
			var out bytes.Buffer
			err := Options{Reader: unservedReader{c}, Namespace: ns, Out: &out}.Run(t.Context())
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if got := strings.Count(out.String(), "  none\n"); got != 6 {
					t.Errorf("want all 6 sections to say none, got %d:\n%s", got, out.String())
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; output:\n%s", out.String())
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if tc.notInErr != "" && strings.Contains(err.Error(), tc.notInErr) {
				t.Errorf("error %q names %q", err, tc.notInErr)
			}
			if out.Len() > 0 {
				t.Errorf("printed a catalog for a missing namespace:\n%s", out.String())
			}
		})
	}
}
