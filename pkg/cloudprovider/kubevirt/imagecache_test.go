package kubevirt

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/imagecache"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/importer"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// imageSize is the size of the test image served over HTTP.
const imageSize = 1 << 20

// imageServer serves imageSize bytes at every path and counts the bytes
// it sent.
func imageServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	image := bytes.Repeat([]byte{0xab}, imageSize)
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n, _ := w.Write(image)
		sent.Add(int64(n))
	}))
	t.Cleanup(srv.Close)
	return srv, &sent
}

// importsFor creates n Machines of spec and returns what importing their
// disks downloads.
func importsFor(t *testing.T, f *fixture, prefix string, n int, spec []byte) importer.Stats {
	t.Helper()
	for i := range n {
		if _, err := f.provider.Create(t.Context(), nil, machine(fmt.Sprintf("%s-%d", prefix, i), spec), f.data, testUserData); err != nil {
			t.Fatalf("Create: %v", err)
		}
	}
	im := &importer.Importer{Reader: f.env.Client, Namespace: f.namespace}
	if err := im.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	return im.Stats()
}

func TestImageCacheImportsOnce(t *testing.T) {
	const machines = 10
	srv, sent := imageServer(t)
	for _, tc := range []struct {
		name     string
		disabled bool
		want     importer.Stats
	}{
		{name: "cached by default", want: importer.Stats{Imports: 1, Bytes: imageSize}},
		{name: "disablePreAllocatedDataVolumes", disabled: true, want: importer.Stats{Imports: machines, Bytes: machines * imageSize}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, sharedEnv(t))
			url := srv.URL + "/ubuntu.img"
			spec := f.spec(t, fmt.Sprintf(`
cloudProviderSpec:
  virtualMachine:
    template:
      primaryDisk: {osImage: %q, disablePreAllocatedDataVolumes: %t}
`, url, tc.disabled))
			before := sent.Load()
			got := importsFor(t, f, "vm", machines, spec)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("imports of %d VMs (-want +got):\n%s", machines, diff)
			}
			if served := sent.Load() - before; served != got.Bytes {
				t.Errorf("the image server sent %d bytes, the importer counted %d", served, got.Bytes)
			}
			t.Logf("%d VMs from one URL: %d imports, %d bytes fetched", machines, got.Imports, got.Bytes)
			wantCaches := 1
			if tc.disabled {
				wantCaches = 0
			}
			if n := len(cacheVolumes(t, f)); n != wantCaches {
				t.Errorf("found %d cache DataVolumes, want %d", n, wantCaches)
			}
		})
	}
}

func TestImageCacheClones(t *testing.T) {
	f := newFixture(t, sharedEnv(t))
	ctx := t.Context()
	url := "http://images.example.com/ubuntu.img"

	t.Run("each VM clones the one cache DataVolume", func(t *testing.T) {
		for _, name := range []string{"clone-a", "clone-b"} {
			if _, err := f.provider.Create(ctx, nil, machine(name, f.spec(t, "")), f.data, testUserData); err != nil {
				t.Fatal(err)
			}
		}
		caches := cacheVolumes(t, f)
		if len(caches) != 1 {
			t.Fatalf("found %d cache DataVolumes, want 1", len(caches))
		}
		cache := caches[0]
		if want := imagecache.DataVolumeName(url, f.storageClass); cache.Name != want {
			t.Errorf("cache DataVolume %s, want %s", cache.Name, want)
		}
		if cache.Spec.Source.HTTP == nil || cache.Spec.Source.HTTP.URL != url {
			t.Errorf("the cache does not import %s: %+v", url, cache.Spec.Source)
		}
		if got := cache.Annotations[imagecache.BindImmediateAnnotation]; got != "true" {
			t.Errorf("cache DataVolume %s=%q, want true: no pod mounts it, so on a WaitForFirstConsumer class it would never bind", imagecache.BindImmediateAnnotation, got)
		}
		for _, name := range []string{"clone-a", "clone-b"} {
			want := &cdicorev1beta1.DataVolumeSourcePVC{Namespace: f.namespace, Name: cache.Name}
			if diff := cmp.Diff(want, rootSource(t, f, name).PVC); diff != "" {
				t.Errorf("root disk of %s (-want +got):\n%s", name, diff)
			}
		}
	})
	t.Run("a DataVolume of the cache name we did not create is not used", func(t *testing.T) {
		foreignURL := "http://images.example.com/foreign.img"
		foreign := &cdicorev1beta1.DataVolume{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.namespace, Name: imagecache.DataVolumeName(foreignURL, f.storageClass)},
			Spec: cdicorev1beta1.DataVolumeSpec{
				Source:  &cdicorev1beta1.DataVolumeSource{Blank: &cdicorev1beta1.DataVolumeBlankImage{}},
				Storage: &cdicorev1beta1.StorageSpec{Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
			},
		}
		f.create(t, foreign)
		spec := f.spec(t, fmt.Sprintf("cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {osImage: %q}}}}", foreignURL))
		if _, err := f.provider.Create(ctx, nil, machine("foreign", spec), f.data, testUserData); err != nil {
			t.Fatal(err)
		}
		if src := rootSource(t, f, "foreign"); src.HTTP == nil || src.HTTP.URL != foreignURL {
			t.Errorf("root disk should import %s directly, got %+v", foreignURL, src)
		}
		var after cdicorev1beta1.DataVolume
		if err := f.env.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(foreign), &after); err != nil {
			t.Fatal(err)
		}
		if after.ResourceVersion != foreign.ResourceVersion {
			t.Errorf("the foreign DataVolume was modified")
		}
	})
	t.Run("a disk smaller than the cache imports directly", func(t *testing.T) {
		bigURL := "http://images.example.com/big.img"
		big := f.spec(t, fmt.Sprintf("cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {osImage: %q, size: 30Gi}}}}", bigURL))
		small := f.spec(t, fmt.Sprintf("cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {osImage: %q, size: 10Gi}}}}", bigURL))
		// The first disk sizes the cache.
		if _, err := f.provider.Create(ctx, nil, machine("big", big), f.data, testUserData); err != nil {
			t.Fatal(err)
		}
		if _, err := f.provider.Create(ctx, nil, machine("small", small), f.data, testUserData); err != nil {
			t.Fatal(err)
		}
		if src := rootSource(t, f, "big"); src.PVC == nil {
			t.Errorf("the first disk should clone the cache, got %+v", src)
		}
		if src := rootSource(t, f, "small"); src.HTTP == nil || src.HTTP.URL != bigURL {
			t.Errorf("the smaller disk should import %s directly, got %+v", bigURL, src)
		}
	})
}

// cacheVolumes returns the provider's cache DataVolumes of the fixture.
func cacheVolumes(t *testing.T, f *fixture) []cdicorev1beta1.DataVolume {
	t.Helper()
	var list cdicorev1beta1.DataVolumeList
	err := f.env.Client.List(t.Context(), &list, ctrlruntimeclient.InNamespace(f.namespace),
		ctrlruntimeclient.MatchingLabels{imagecache.Label: imagecache.KindHTTP})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// rootSource returns the source of the root disk of the VM name.
func rootSource(t *testing.T, f *fixture, name string) *cdicorev1beta1.DataVolumeSource {
	t.Helper()
	v, _ := f.objects(t, name)
	return v.Spec.DataVolumeTemplates[0].Spec.Source
}
