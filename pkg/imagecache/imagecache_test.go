package imagecache

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestDataVolumeName(t *testing.T) {
	a := DataVolumeName("http://images/ubuntu.img", "fast")
	if a != DataVolumeName("http://images/ubuntu.img", "fast") {
		t.Fatalf("the name is not deterministic")
	}
	others := []string{
		DataVolumeName("http://images/ubuntu.img", ""),
		DataVolumeName("http://images/ubuntu.img", "slow"),
		DataVolumeName("http://images/debian.img", "fast"),
		// The separator keeps URL and class apart.
		DataVolumeName("http://images/ubuntu.imgf", "ast"),
	}
	for _, o := range others {
		if o == a {
			t.Errorf("different inputs share the name %s", a)
		}
	}
	if errs := validation.IsDNS1123Label(a); len(errs) > 0 {
		t.Errorf("%s is not a valid name: %v", a, errs)
	}
}

func TestParseImages(t *testing.T) {
	tests := []struct {
		name    string
		data    map[string]string
		want    []Image
		wantErr string
	}{
		{
			name: "valid images sorted by name",
			data: map[string]string{
				"ubuntu": "url: https://images/ubuntu.img\nsize: 10Gi\nstorageClassName: fast\n",
				"debian": `{"url": "http://images/debian.img", "size": "5Gi"}`,
			},
			want: []Image{
				{Name: "debian", URL: "http://images/debian.img", Size: resource.MustParse("5Gi")},
				{Name: "ubuntu", URL: "https://images/ubuntu.img", StorageClassName: "fast", Size: resource.MustParse("10Gi")},
			},
		},
		{
			name:    "invalid entries are reported, valid ones kept",
			data:    map[string]string{"ok": "url: http://a\nsize: 1Gi", "Bad_Name": "url: http://a\nsize: 1Gi", "ftp": "url: ftp://a\nsize: 1Gi"},
			want:    []Image{{Name: "ok", URL: "http://a", Size: resource.MustParse("1Gi")}},
			wantErr: `image "Bad_Name": the name does not make a valid DataVolume name`,
		},
		{
			name:    "missing size",
			data:    map[string]string{"a": "url: http://a"},
			wantErr: `image "a": size must be positive`,
		},
		{
			name:    "unknown field",
			data:    map[string]string{"a": "url: http://a\nsize: 1Gi\nclass: x"},
			wantErr: `image "a": failed to parse`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseImages(&corev1.ConfigMap{Data: tt.data})
			if tt.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v does not contain %q", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("images (-want +got):\n%s", diff)
			}
		})
	}
}
