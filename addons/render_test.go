package addons_test

import (
	"encoding/base64"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
)

func TestRenderKubeVirtCSI(t *testing.T) {
	for _, tc := range []struct {
		name       string
		params     addons.Params
		wantImages []string
	}{
		{
			name:       "default images",
			params:     addons.Params{ClusterID: "abc", InfraNamespace: "cluster-abc", InfraKubeconfig: []byte("infra")},
			wantImages: []string{addons.DefaultDriverImage, addons.DefaultRegistrarImage, addons.DefaultLivenessProbeImage},
		},
		{
			name: "overridden images",
			params: addons.Params{
				ClusterID: "abc", InfraNamespace: "cluster-abc", InfraKubeconfig: []byte("infra"),
				DriverImage: "r/d:1", RegistrarImage: "r/r:1", LivenessProbeImage: "r/l:1",
			},
			wantImages: []string{"r/d:1", "r/r:1", "r/l:1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := addons.Render(addons.KubeVirtCSI, tc.params)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			byKind := map[string]*unstructured.Unstructured{}
			for _, o := range objs {
				kinds = append(kinds, o.GetKind()+"/"+o.GetName())
				byKind[o.GetKind()] = o
			}
			wantKinds := []string{
				"Namespace/kubevirt-csi-driver", "CSIDriver/csi.kubevirt.io", "Secret/infra-cluster-credentials",
				"ConfigMap/driver-config", "ServiceAccount/kubevirt-csi-node", "ClusterRole/kubevirt-csi-node",
				"ClusterRoleBinding/kubevirt-csi-node", "DaemonSet/kubevirt-csi-node",
			}
			if diff := cmp.Diff(wantKinds, kinds); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			data, _, _ := unstructured.NestedString(byKind["Secret"].Object, "data", "kubeconfig")
			if want := base64.StdEncoding.EncodeToString(tc.params.InfraKubeconfig); data != want {
				t.Errorf("kubeconfig data = %q, want %q", data, want)
			}
			ns, _, _ := unstructured.NestedString(byKind["ConfigMap"].Object, "data", "infraClusterNamespace")
			if ns != tc.params.InfraNamespace {
				t.Errorf("infraClusterNamespace = %q, want %q", ns, tc.params.InfraNamespace)
			}
			containers, _, _ := unstructured.NestedSlice(byKind["DaemonSet"].Object, "spec", "template", "spec", "containers")
			var images []string
			for _, c := range containers {
				m, _ := c.(map[string]any)
				image, _, _ := unstructured.NestedString(m, "image")
				images = append(images, image)
			}
			if diff := cmp.Diff(tc.wantImages, images); diff != "" {
				t.Errorf("images (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRenderUnknownAddon(t *testing.T) {
	if _, err := addons.Render("no-such-addon", addons.Params{}); err == nil {
		t.Error("Render of an unknown addon succeeded")
	}
}
