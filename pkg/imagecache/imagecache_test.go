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
			wantErr: `image "a": size: must be positive, got "0"`,
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

// TestParseImagesSizes: a size must be a whole number of bytes from 1 to
// MaxSize; a larger one was cut to the int64 maximum and imported.
func TestParseImagesSizes(t *testing.T) {
	for _, tc := range []struct {
		size string
		// want is the message naming the size; "" for a valid one.
		want string
	}{
		{size: "99999999999999999999999999Ei", want: `size: must be at most 64Ti, got "99999999999999999999999999Ei"`},
		{size: "9Ei", want: `size: must be at most 64Ti, got "9Ei"`},
		{size: "99999999999999999999999999E", want: `size: must be at most 64Ti`},
		{size: "1e30", want: `size: must be at most 64Ti, got "1e+30"`},
		{size: "65Ti", want: `size: must be at most 64Ti, got "65Ti"`},
		{size: `"70368744177665"`, want: `size: must be at most 64Ti, got "70368744177665"`},
		{size: "1.5m", want: `size: must be a whole number of bytes, such as 10Gi, got "1.5m"`},
		{size: "100m", want: `size: must be a whole number of bytes`},
		{size: "1n", want: `size: must be a whole number of bytes`},
		{size: "1.5", want: `size: must be a whole number of bytes, such as 10Gi, got "1.5"`},
		{size: "-1Gi", want: `size: must be positive, got "-1Gi"`},
		{size: "-0.5", want: `size: must be positive`},
		{size: "0", want: `size: must be positive, got "0"`},
		{size: "0Gi", want: `size: must be positive`},
		{size: "1"},
		{size: "1.5Gi"},
		{size: "1000m"},
		{size: "10G"},
		{size: "64Ti"},
		{size: "70368744177664"},
	} {
		t.Run(tc.size, func(t *testing.T) {
			cm := &corev1.ConfigMap{Data: map[string]string{
				"image": "url: http://images/a.img\nsize: " + tc.size + "\n",
				"valid": "url: http://images/b.img\nsize: 10Gi\n",
			}}
			got, err := ParseImages(cm)
			names := map[string]bool{}
			for _, img := range got {
				names[img.Name] = true
			}
			if !names["valid"] {
				t.Errorf("the valid image beside it was left out: %v", err)
			}
			if tc.want == "" {
				if err != nil || !names["image"] {
					t.Errorf("a valid size was refused: %v", err)
				}
				return
			}
			if names["image"] {
				t.Error("an invalid size was accepted")
			}
			if want := `image "image": ` + tc.want; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v\ndoes not contain %q", err, want)
			}
		})
	}
}
