package envtest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

func TestCDIController(t *testing.T) {
	env := Start(t, WithCDIController())
	ctx, c := t.Context(), env.Client
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Provisioner: "rancher.io/local-path"}
	if err := c.Create(ctx, class); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, time.Minute, func() error {
		if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Name: class.Name}, &cdicorev1beta1.StorageProfile{}); err != nil {
			return fmt.Errorf("no StorageProfile from cdi-controller: %w", errors.Join(err, env.ComponentErrors()))
		}
		return nil
	})
	ns := env.CreateNamespace(t, "cdi-test")
	dv := &cdicorev1beta1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "blank"},
		Spec: cdicorev1beta1.DataVolumeSpec{
			Source: &cdicorev1beta1.DataVolumeSource{Blank: &cdicorev1beta1.DataVolumeBlankImage{}},
			Storage: &cdicorev1beta1.StorageSpec{
				StorageClassName: &class.Name,
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		},
	}
	if err := c.Create(ctx, dv); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, time.Minute, func() error {
		if err := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(dv), &corev1.PersistentVolumeClaim{}); err != nil {
			return fmt.Errorf("no PVC from cdi-controller: %w", errors.Join(err, env.ComponentErrors()))
		}
		return nil
	})
	t.Run("cross-namespace clone", func(t *testing.T) { testCrossNamespaceClone(t, env, class, ns) })
}

// cloneTokenAnnotation holds the token CDI's admission signs for a clone.
const cloneTokenAnnotation = "cdi.kubevirt.io/storage.clone.token"

// testCrossNamespaceClone: CDI's admission signs a clone token for a
// DataVolume cloning from another namespace (its mutating webhook, on a
// real create), and cdi-controller, which checks the token with the public
// key of the same Secret, makes the DataVolume's PVC.
func testCrossNamespaceClone(t *testing.T, env *Env, class *storagev1.StorageClass, target string) {
	t.Helper()
	ctx, c := t.Context(), env.Client
	images := env.CreateNamespace(t, "cdi-images")
	storage := corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}
	source := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: images, Name: "image"},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &class.Name, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: storage,
		},
	}
	if err := c.Create(ctx, source); err != nil {
		t.Fatal(err)
	}
	dv := &cdicorev1beta1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{Namespace: target, Name: "clone"},
		Spec: cdicorev1beta1.DataVolumeSpec{
			Source: &cdicorev1beta1.DataVolumeSource{PVC: &cdicorev1beta1.DataVolumeSourcePVC{Namespace: images, Name: source.Name}},
			Storage: &cdicorev1beta1.StorageSpec{
				StorageClassName: &class.Name, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: storage,
			},
		},
	}
	if err := c.Create(ctx, dv); err != nil {
		t.Fatal(err)
	}
	if dv.Annotations[cloneTokenAnnotation] == "" {
		t.Fatalf("the stored cross-namespace clone has no %s: CDI's mutating webhook did not run", cloneTokenAnnotation)
	}
	poll.Until(t, time.Minute, func() error {
		if err := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(dv), &corev1.PersistentVolumeClaim{}); err != nil {
			return fmt.Errorf("no PVC from cdi-controller for the cross-namespace clone: %w", errors.Join(err, env.ComponentErrors()))
		}
		return nil
	})
}
