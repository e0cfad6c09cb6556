package imagecache

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/imagecache"
)

func TestReferences(t *testing.T) {
	vm := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"dataVolumeTemplates": []any{
			map[string]any{"spec": map[string]any{"source": map[string]any{"pvc": map[string]any{"name": "same-implicit"}}}},
			map[string]any{"spec": map[string]any{"source": map[string]any{"pvc": map[string]any{"namespace": "ns", "name": "same-explicit"}}}},
			map[string]any{"spec": map[string]any{"source": map[string]any{"pvc": map[string]any{"namespace": "other", "name": "elsewhere"}}}},
			map[string]any{"spec": map[string]any{"source": map[string]any{"http": map[string]any{"url": "http://x"}}}},
			"not an object",
		},
		"template": map[string]any{"spec": map[string]any{"volumes": []any{
			map[string]any{"dataVolume": map[string]any{"name": "mounted-dv"}},
			map[string]any{"persistentVolumeClaim": map[string]any{"claimName": "mounted-pvc"}},
			map[string]any{"cloudInitNoCloud": map[string]any{}},
		}}},
	}}}
	want := []string{"same-implicit", "same-explicit", "mounted-dv", "mounted-pvc"}
	if diff := cmp.Diff(want, references(vm, "ns")); diff != "" {
		t.Errorf("references (-want +got):\n%s", diff)
	}
}

func TestSameImage(t *testing.T) {
	base := imagecache.Image{Name: "ubuntu", URL: "http://a", StorageClassName: "fast", Size: resource.MustParse("10Gi")}
	have := namedDataVolume("ns", base)
	tests := []struct {
		name   string
		change func(*imagecache.Image)
		want   bool
	}{
		{name: "unchanged", change: func(*imagecache.Image) {}, want: true},
		{name: "same size, other spelling", change: func(i *imagecache.Image) { i.Size = resource.MustParse("10240Mi") }, want: true},
		{name: "other URL", change: func(i *imagecache.Image) { i.URL = "http://b" }},
		{name: "other class", change: func(i *imagecache.Image) { i.StorageClassName = "" }},
		{name: "other size", change: func(i *imagecache.Image) { i.Size = resource.MustParse("11Gi") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img := base
			tt.change(&img)
			if got := sameImage(have, namedDataVolume("ns", img)); got != tt.want {
				t.Errorf("sameImage = %t, want %t", got, tt.want)
			}
		})
	}
}
