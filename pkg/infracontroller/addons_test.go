package infracontroller_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/csiaccess"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

func TestAddons(t *testing.T) {
	infra := envtest.Start(t, envtest.WithCRDFiles())
	tenantEnv := envtest.Start(t, envtest.WithCRDFiles())
	ctx, ic, tc := t.Context(), infra.Client, tenantEnv.Client
	o := infracontroller.DefaultOptions()
	o.Flavors = flavorsOff()
	o.DisableStorageClasses, o.DisableNetworkPolicies = true, true
	o.EnableAddons = true
	o.Addons.ResyncInterval = 500 * time.Millisecond
	startController(t, infra.Config, o, nil, -1)
	createTenant(t, ic, "cluster-a", tenantEnv.KubeconfigBytes)
	eventually(t, wait, func() error {
		return ic.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: "cluster-a", Name: csiaccess.TokenSecretName}, &corev1.Secret{})
	})
	fillToken(t, infra, "cluster-a")

	want, err := addons.Render(addons.KubeVirtCSI, addons.Params{ClusterID: "a", InfraNamespace: "cluster-a"})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("the manifests are applied with the driver's infra kubeconfig", func(t *testing.T) {
		eventually(t, wait, func() error {
			for _, obj := range want {
				if _, err := get(ctx, tc, obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName()); err != nil {
					return err
				}
			}
			var infraSecret, tenantSecret corev1.Secret
			if err := ic.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: "cluster-a", Name: csiaccess.KubeconfigSecretName}, &infraSecret); err != nil {
				return err
			}
			if err := tc.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: "kubevirt-csi-driver", Name: "infra-cluster-credentials"}, &tenantSecret); err != nil {
				return err
			}
			if diff := cmp.Diff(infraSecret.Data[csiaccess.KubeconfigKey], tenantSecret.Data["kubeconfig"]); diff != "" {
				return fmt.Errorf("tenant copy of the infra kubeconfig (-want +got):\n%s", diff)
			}
			return nil
		})
	})
	t.Run("re-applying unchanged manifests writes nothing", func(t *testing.T) {
		before := resourceVersions(ctx, t, tc, want)
		time.Sleep(3 * o.Addons.ResyncInterval)
		if diff := cmp.Diff(before, resourceVersions(ctx, t, tc, want)); diff != "" {
			t.Errorf("resource versions changed on re-apply (-before +after):\n%s", diff)
		}
	})
	t.Run("a hand edit is taken back", func(t *testing.T) {
		var ds appsv1.DaemonSet
		key := ctrlruntimeclient.ObjectKey{Namespace: "kubevirt-csi-driver", Name: "kubevirt-csi-node"}
		if err := tc.Get(ctx, key, &ds); err != nil {
			t.Fatal(err)
		}
		ds.Spec.Template.Spec.Containers[0].Image = "example.com/edited:v0"
		if err := tc.Update(ctx, &ds); err != nil {
			t.Fatal(err)
		}
		if err := tc.Delete(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "csi.kubevirt.io"}}); err != nil {
			t.Fatal(err)
		}
		eventually(t, wait, func() error {
			if err := tc.Get(ctx, key, &ds); err != nil {
				return err
			}
			if got := ds.Spec.Template.Spec.Containers[0].Image; got != addons.DefaultDriverImage {
				return fmt.Errorf("driver image = %s, want %s", got, addons.DefaultDriverImage)
			}
			return tc.Get(ctx, ctrlruntimeclient.ObjectKey{Name: "csi.kubevirt.io"}, &storagev1.CSIDriver{})
		})
	})
}

// resourceVersions returns kind/namespace/name → resourceVersion of the
// tenant objects of objs.
func resourceVersions(ctx context.Context, t *testing.T, c ctrlruntimeclient.Client, objs []*unstructured.Unstructured) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, obj := range objs {
		got, err := get(ctx, c, obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName())
		if err != nil {
			t.Fatalf("failed to read an applied object: %v", err)
		}
		out[obj.GetKind()+"/"+obj.GetNamespace()+"/"+obj.GetName()] = got.GetResourceVersion()
	}
	return out
}
