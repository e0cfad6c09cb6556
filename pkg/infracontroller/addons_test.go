package infracontroller_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/componentaccess"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/csinodeplugin"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

func TestAddons(t *testing.T) {
	infra := infraPlane.Env(t)
	tenantEnv := envtest.Start(t, envtest.WithCRDFiles())
	ctx, ic, tc := t.Context(), infra.Client, tenantEnv.Client
	s := newSpace(t, infra)
	nsA := s.tenant("a")
	// What an earlier release left in the tenant cluster: the infra
	// kubeconfig Secret (ours, to be deleted) and a Secret of someone else
	// in the same namespace (to be left alone).
	legacy := createLegacySecrets(t, tc)
	o := s.options(infracontroller.DefaultOptions())
	o.Flavors = flavorsOff()
	o.EnableStorageClasses, o.EnableNetworkPolicies = false, false
	o.EnableCSINodePlugin = true
	// No resync: hand edits are taken back through the tenant watch.
	o.CSINodePlugin.ResyncInterval = 0
	r := startController(t, infra.Config, o, nil, -1)
	createTenant(t, ic, nsA, tenantEnv.KubeconfigBytes)
	poll.Until(t, wait, func() error {
		return ic.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: nsA, Name: componentaccess.TokenSecretName}, &corev1.Secret{})
	})
	fillToken(t, infra, nsA)

	want, err := addons.Render(addons.KubeVirtCSI, addons.Params{ClusterID: "a", InfraNamespace: nsA})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("the manifests are applied", func(t *testing.T) {
		poll.Until(t, wait, func() error {
			for _, obj := range want {
				if _, err := get(ctx, tc, obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName()); err != nil {
					return err
				}
			}
			return nil
		})
	})
	t.Run("the tenant cluster holds no infra credentials", func(t *testing.T) {
		var infraSecret corev1.Secret
		poll.Until(t, wait, func() error {
			return ic.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: nsA, Name: componentaccess.KubeconfigSecretName}, &infraSecret)
		})
		poll.Until(t, wait, func() error {
			err := tc.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(legacy), &corev1.Secret{})
			switch {
			case apierrors.IsNotFound(err):
				return nil
			case err != nil:
				return err
			}
			return errors.New("the earlier release's infra Secret is still there")
		})
		var secrets corev1.SecretList
		if err := tc.List(ctx, &secrets); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range secrets.Items {
			names = append(names, s.Namespace+"/"+s.Name)
			for key, value := range s.Data {
				if bytes.Equal(value, infraSecret.Data[componentaccess.KubeconfigKey]) {
					t.Errorf("tenant Secret %s/%s key %s holds the infra kubeconfig", s.Namespace, s.Name, key)
				}
			}
		}
		if diff := cmp.Diff([]string{"kubevirt-csi-driver/someone-elses"}, names); diff != "" {
			t.Errorf("tenant Secrets (-want +got):\n%s", diff)
		}
	})
	t.Run("re-applying unchanged manifests writes nothing", func(t *testing.T) {
		before := resourceVersions(ctx, t, tc, want)
		// Our own applies are seen by the watch; they must not feed a loop.
		time.Sleep(2 * time.Second)
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
		poll.Until(t, wait, func() error {
			if err := tc.Get(ctx, key, &ds); err != nil {
				return err
			}
			if got := ds.Spec.Template.Spec.Containers[0].Image; got != addons.DefaultDriverImage {
				return fmt.Errorf("driver image = %s, want %s", got, addons.DefaultDriverImage)
			}
			return tc.Get(ctx, ctrlruntimeclient.ObjectKey{Name: "csi.kubevirt.io"}, &storagev1.CSIDriver{})
		})
	})
	t.Run("an object made not ours is left alone and told on the tenant Namespace", func(t *testing.T) {
		checkMadeNotOurs(t, tc, ic, nsA)
	})
	t.Run("the watch stops with the kubeconfig Secret", func(t *testing.T) {
		if n := r.controllers.CSINodePlugin.RunningWatches(); n != 1 {
			t.Fatalf("running watches = %d, want 1", n)
		}
		if err := ic.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: "tenant-kubeconfig"}}); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error {
			if n := r.controllers.CSINodePlugin.RunningWatches(); n != 0 {
				return fmt.Errorf("running watches = %d, want 0", n)
			}
			return nil
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

// createLegacySecrets creates, in the tenant cluster's driver namespace,
// the infra kubeconfig Secret of an earlier release (returned) and a
// foreign Secret.
func createLegacySecrets(t *testing.T, c ctrlruntimeclient.Client) *corev1.Secret {
	t.Helper()
	ctx := t.Context()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kubevirt-csi-driver"}}); err != nil {
		t.Fatal(err)
	}
	legacy := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kubevirt-csi-driver", Name: csinodeplugin.LegacyInfraSecretName, Labels: withManaged(nil)},
		Data:       map[string][]byte{"kubeconfig": []byte("old infra kubeconfig")},
	}
	foreign := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kubevirt-csi-driver", Name: "someone-elses"},
		Data:       map[string][]byte{"key": []byte("value")},
	}
	for _, s := range []*corev1.Secret{legacy, foreign} {
		if err := c.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	return legacy
}

// checkMadeNotOurs takes the managed-by label off the node plugin's
// ConfigMap in the tenant cluster and checks that the controller leaves it
// alone and records ObjectInTheWay on the tenant Namespace nsA.
func checkMadeNotOurs(t *testing.T, tc, ic ctrlruntimeclient.Client, nsA string) {
	t.Helper()
	ctx := t.Context()
	var cm corev1.ConfigMap
	key := ctrlruntimeclient.ObjectKey{Namespace: "kubevirt-csi-driver", Name: "driver-config"}
	if err := tc.Get(ctx, key, &cm); err != nil {
		t.Fatal(err)
	}
	delete(cm.Labels, tenant.ManagedByLabel)
	cm.Data = map[string]string{"theirs": "now"}
	if err := tc.Update(ctx, &cm); err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsA}}
	poll.Until(t, wait, func() error { return checkWarning(ctx, ic, ns, infrav1alpha1.ReasonObjectInTheWay, nil) })
	if err := tc.Get(ctx, key, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["theirs"] != "now" {
		t.Errorf("the ConfigMap that is no longer ours was written: %v", cm.Data)
	}
}
