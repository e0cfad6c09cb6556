package installer

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// snapshotKinds are the kinds the installer's charts and code create.
var snapshotKinds = []schema.GroupVersionKind{
	{Version: "v1", Kind: "Namespace"},
	{Version: "v1", Kind: "ServiceAccount"},
	{Version: "v1", Kind: "ConfigMap"},
	{Version: "v1", Kind: "Secret"},
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"},
	{Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass"},
	{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
	{Group: "kubevirt.io", Version: "v1", Kind: "KubeVirt"},
	{Group: "cdi.kubevirt.io", Version: "v1beta1", Kind: "CDI"},
}

// ofTheInstallation reports whether an object belongs to the installation: chart objects
// and CRDs (part-of label), installer-managed namespaces, Helm release
// records.
func ofTheInstallation(obj metav1.Object) bool {
	l := obj.GetLabels()
	return l["app.kubernetes.io/part-of"] == "kubevirt-kkp" || l["app.kubernetes.io/managed-by"] == "kubevirt-installer" || l["owner"] == "helm"
}

// snapshot maps every object of the installation to its resourceVersion.
func snapshot(t *testing.T, c ctrlruntimeclient.Client) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, gvk := range snapshotKinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.List(t.Context(), list); err != nil {
			if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
				continue
			}
			t.Fatalf("failed to list %s: %v", gvk.Kind, err)
		}
		for _, item := range list.Items {
			if ofTheInstallation(&item) {
				out[gvk.Kind+" "+item.Namespace+"/"+item.Name] = item.ResourceVersion
			}
		}
	}
	return out
}
