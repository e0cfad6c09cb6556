package v1alpha1_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
)

func TestOptionsAnnotation(t *testing.T) {
	for _, tc := range []struct {
		name     string
		options  infrav1alpha1.TenantClusterOptions
		wantJSON string
	}{
		{name: "nothing switched", wantJSON: ""},
		{name: "one set off", options: infrav1alpha1.TenantClusterOptions{Instancetypes: ptr.To(false)}, wantJSON: `{"instancetypes":false}`},
		{
			name:     "every switch",
			options:  infrav1alpha1.TenantClusterOptions{Presets: ptr.To(true), Instancetypes: ptr.To(false), Preferences: ptr.To(false)},
			wantJSON: `{"presets":true,"instancetypes":false,"preferences":false}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.options.Annotation()
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.wantJSON {
				t.Errorf("Annotation() = %q, want %q", got, tc.wantJSON)
			}
			annotations := map[string]string{}
			if got != "" {
				annotations[infrav1alpha1.OptionsAnnotation] = got
			}
			back, err := infrav1alpha1.OptionsOf(annotations)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.options, back); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOptionsOfBadAnnotation(t *testing.T) {
	if _, err := infrav1alpha1.OptionsOf(map[string]string{infrav1alpha1.OptionsAnnotation: "{"}); err == nil {
		t.Error("OptionsOf accepted a broken annotation")
	}
}

func TestOff(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *bool
		want bool
	}{
		{name: "unset", in: nil, want: false},
		{name: "true", in: ptr.To(true), want: false},
		{name: "false", in: ptr.To(false), want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := infrav1alpha1.Off(tc.in); got != tc.want {
				t.Errorf("Off = %v, want %v", got, tc.want)
			}
		})
	}
}
