package infracontroller_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/imagecache"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// TestImageCacheAcceptedByCDI has CDI v1.65's own cdi-controller take a
// named image's DataVolume on a storage class whose provisioner CDI does
// not know, so that its StorageProfile advertises no access mode: CDI
// refuses a DataVolume that names none there, and makes the PVC of ours.
func TestImageCacheAcceptedByCDI(t *testing.T) {
	env := envtest.Start(t, envtest.WithCDIController())
	ctx, c := t.Context(), env.Client
	const ns, class = "cluster-cdi-images", "unprofiled"
	immediate := storagev1.VolumeBindingImmediate
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: "example.com/unprofiled", VolumeBindingMode: &immediate,
	}
	if err := c.Create(ctx, sc); err != nil {
		t.Fatal(err)
	}
	profileWait := 2 * time.Minute
	poll.Until(t, profileWait, func() error { return profileWithoutAccessModes(ctx, c, class) })
	createTenant(t, c, ns, nil)
	o := infracontroller.DefaultOptions()
	o.Flavors, o.EnableStorageClasses, o.EnableCSIAccess = flavorsOff(), false, false
	o.EnableImageCache = true
	startController(t, env.Config, o, nil, -1)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: imagecache.ConfigMapName},
		Data:       map[string]string{"debian": "url: http://images/debian.img\nsize: 5Gi\nstorageClassName: " + class + "\n"},
	}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	name := imagecache.NamedDataVolumeName("debian")
	poll.Until(t, profileWait, func() error {
		pvc := &corev1.PersistentVolumeClaim{}
		if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: ns, Name: name}, pvc); err != nil {
			state, refused := dataVolumeState(ctx, c, ns, name)
			if refused {
				t.Fatalf("CDI refused DataVolume %s: %s", name, state)
			}
			return fmt.Errorf("CDI made no PVC for %s: %w (DataVolume: %s)", name, err, state)
		}
		if !slices.Equal(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}) {
			return fmt.Errorf("PVC %s has access modes %v, want [ReadWriteOnce]", name, pvc.Spec.AccessModes)
		}
		return nil
	})
}

// profileWithoutAccessModes checks that cdi-controller made the class's
// StorageProfile and that it advertises no access mode.
func profileWithoutAccessModes(ctx context.Context, c ctrlruntimeclient.Client, class string) error {
	profile := &cdicorev1beta1.StorageProfile{}
	if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Name: class}, profile); err != nil {
		return fmt.Errorf("cdi-controller made no StorageProfile %s: %w", class, err)
	}
	if len(profile.Status.ClaimPropertySets) != 0 {
		return fmt.Errorf("StorageProfile %s advertises %+v; the test needs one without access modes", class, profile.Status.ClaimPropertySets)
	}
	return nil
}

// dataVolumeState describes a DataVolume's phase and conditions for a
// failure message, and reports whether CDI found its claim invalid.
func dataVolumeState(ctx context.Context, c ctrlruntimeclient.Client, namespace, name string) (string, bool) {
	dv := &cdicorev1beta1.DataVolume{}
	if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: name}, dv); err != nil {
		return err.Error(), false
	}
	out, refused := fmt.Sprintf("phase %q", dv.Status.Phase), false
	for _, cond := range dv.Status.Conditions {
		out += fmt.Sprintf("; %s=%s %s: %s", cond.Type, cond.Status, cond.Reason, cond.Message)
		refused = refused || cond.Reason == "ErrClaimNotValid"
	}
	return out, refused
}
