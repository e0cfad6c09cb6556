package infracontroller_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/imagecache"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	infraimagecache "github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/imagecache"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

const cacheGrace = 2 * time.Second

func TestImageCache(t *testing.T) {
	env := infraPlane.Env(t)
	ctx, c := t.Context(), env.Client
	s := newSpace(t, env)
	nsImages := s.tenant("images")
	o := s.options(infracontroller.DefaultOptions())
	o.Flavors, o.EnableStorageClasses, o.EnableCSIAccess = flavorsOff(), false, false
	o.EnableImageCache, o.ImageCache.GracePeriod = true, cacheGrace
	ns := nsImages
	createTenant(t, c, ns, nil)
	// Objects we did not create: a DataVolume with a named image's name
	// and an unlabelled, unreferenced one.
	foreignNamed := dataVolume(ns, imagecache.NamedDataVolumeName("debian"), nil, "http://elsewhere/debian.img")
	foreignPlain := dataVolume(ns, "scratch", nil, "http://elsewhere/scratch.img")
	for _, dv := range []*unstructured.Unstructured{foreignNamed, foreignPlain} {
		if err := c.Create(ctx, dv); err != nil {
			t.Fatal(err)
		}
	}
	startController(t, env.Config, o, nil, -1)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: imagecache.ConfigMapName},
		Data: map[string]string{
			"ubuntu": "url: http://images/ubuntu-1.img\nsize: 10Gi\nstorageClassName: fast\n",
			"debian": "url: http://images/debian.img\nsize: 5Gi\n",
			// Refused: sizes that are not whole bytes from 1 to 64Ti.
			"huge":     "url: http://images/huge.img\nsize: 99999999999999999999999999Ei\n",
			"fraction": "url: http://images/fraction.img\nsize: 1.5m\n",
			"negative": "url: http://images/negative.img\nsize: -1Gi\n",
		},
	}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	ubuntu := imagecache.NamedDataVolumeName("ubuntu")

	t.Run("a named image is imported as a DataVolume", func(t *testing.T) {
		poll.Until(t, wait, func() error { return checkImage(ctx, c, ns, ubuntu, "http://images/ubuntu-1.img", "fast", "10Gi") })
	})
	t.Run("images of invalid sizes are never imported", func(t *testing.T) {
		poll.Holds(t, time.Second, func() error {
			for _, name := range []string{"huge", "fraction", "negative"} {
				if err := gone(ctx, c, ns, imagecache.NamedDataVolumeName(name)); err != nil {
					return err
				}
			}
			return nil
		})
		poll.Until(t, wait, func() error {
			return checkWarning(ctx, c, cm, infrav1alpha1.ReasonInvalidConfig, []string{"huge", "fraction", "negative"})
		})
	})
	t.Run("a DataVolume of the same name we did not create is left alone", func(t *testing.T) {
		poll.Holds(t, time.Second, func() error { return unchanged(ctx, c, foreignNamed) })
	})
	t.Run("a changed image re-creates its unused DataVolume", func(t *testing.T) {
		cm.Data["ubuntu"] = "url: http://images/ubuntu-2.img\nsize: 10Gi\nstorageClassName: fast\n"
		if err := c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error { return checkImage(ctx, c, ns, ubuntu, "http://images/ubuntu-2.img", "fast", "10Gi") })
	})
	t.Run("a cache volume stays while a VM clones it and goes after the grace period", func(t *testing.T) {
		name := imagecache.DataVolumeName("http://images/fedora.img", "fast")
		dv := dataVolume(ns, name, map[string]string{imagecache.Label: imagecache.KindHTTP}, "http://images/fedora.img")
		if err := c.Create(ctx, dv); err != nil {
			t.Fatal(err)
		}
		vm := cloningVM(ns, "worker-1", name)
		if err := c.Create(ctx, vm); err != nil {
			t.Fatal(err)
		}
		poll.Holds(t, 2*cacheGrace, func() error { return exists(ctx, c, ns, name) })
		if err := c.Delete(ctx, vm); err != nil {
			t.Fatal(err)
		}
		deleted := time.Now()
		poll.Until(t, wait, func() error { return gone(ctx, c, ns, name) })
		if d := time.Since(deleted); d < cacheGrace {
			t.Errorf("the cache volume went %s after its last VM, before the grace period of %s", d, cacheGrace)
		}
	})
	t.Run("a named image removed from the list goes after the grace period", func(t *testing.T) {
		delete(cm.Data, "ubuntu")
		if err := c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
		removed := time.Now()
		poll.Until(t, wait, func() error { return gone(ctx, c, ns, ubuntu) })
		if d := time.Since(removed); d < cacheGrace {
			t.Errorf("the image went %s after its removal, before the grace period of %s", d, cacheGrace)
		}
	})
	t.Run("DataVolumes we did not create are never deleted", func(t *testing.T) {
		for _, dv := range []*unstructured.Unstructured{foreignNamed, foreignPlain} {
			if err := unchanged(ctx, c, dv); err != nil {
				t.Error(err)
			}
		}
	})
}

func dataVolume(namespace, name string, labels map[string]string, url string) *unstructured.Unstructured {
	return object(infraimagecache.DataVolumeGVK, namespace, name, labels, map[string]any{
		"source":  map[string]any{"http": map[string]any{"url": url}},
		"storage": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}},
	})
}

// cloningVM is a VM whose root disk clones the DataVolume source.
func cloningVM(namespace, name, source string) *unstructured.Unstructured {
	return object(infraimagecache.VirtualMachineGVK, namespace, name, nil, map[string]any{
		"runStrategy": "Halted",
		"dataVolumeTemplates": []any{map[string]any{
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{
				"source":  map[string]any{"pvc": map[string]any{"namespace": namespace, "name": source}},
				"storage": map[string]any{"resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}},
			},
		}},
		"template": map[string]any{"spec": map[string]any{"domain": map[string]any{"devices": map[string]any{}}}},
	})
}

func checkImage(ctx context.Context, c ctrlruntimeclient.Client, namespace, name, url, class, size string) error {
	dv, err := get(ctx, c, infraimagecache.DataVolumeGVK, namespace, name)
	if err != nil {
		return err
	}
	want := map[string]any{
		"source": map[string]any{"http": map[string]any{"url": url}},
		"storage": map[string]any{
			"accessModes":      []any{"ReadWriteOnce"},
			"storageClassName": class,
			"resources":        map[string]any{"requests": map[string]any{"storage": size}},
		},
	}
	if diff := cmp.Diff(want, dv.Object["spec"]); diff != "" {
		return fmt.Errorf("spec of %s (-want +got):\n%s", name, diff)
	}
	wantLabels := withManaged(map[string]string{imagecache.Label: imagecache.KindNamed})
	if diff := cmp.Diff(wantLabels, dv.GetLabels()); diff != "" {
		return fmt.Errorf("labels of %s (-want +got):\n%s", name, diff)
	}
	// No pod mounts it: CDI must bind it without waiting for one.
	if got := dv.GetAnnotations()[imagecache.BindImmediateAnnotation]; got != "true" {
		return fmt.Errorf("%s has %s=%q, want true", name, imagecache.BindImmediateAnnotation, got)
	}
	return nil
}

func exists(ctx context.Context, c ctrlruntimeclient.Client, namespace, name string) error {
	dv, err := get(ctx, c, infraimagecache.DataVolumeGVK, namespace, name)
	if err != nil {
		return err
	}
	if !dv.GetDeletionTimestamp().IsZero() {
		return fmt.Errorf("DataVolume %s is being deleted", name)
	}
	return nil
}

func gone(ctx context.Context, c ctrlruntimeclient.Client, namespace, name string) error {
	_, err := get(ctx, c, infraimagecache.DataVolumeGVK, namespace, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return errors.New("DataVolume " + name + " still exists")
}

// unchanged checks that the object still exists with the resourceVersion
// it had when created.
func unchanged(ctx context.Context, c ctrlruntimeclient.Client, want *unstructured.Unstructured) error {
	have, err := get(ctx, c, want.GroupVersionKind(), want.GetNamespace(), want.GetName())
	if err != nil {
		return err
	}
	if have.GetResourceVersion() != want.GetResourceVersion() {
		return fmt.Errorf("%s was modified", want.GetName())
	}
	return nil
}
