package images

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		set     Set
		wantErr string
	}{
		{
			name: "valid",
			set:  Set{{Name: "a", ValuesKey: "a", Ref: "quay.io/x/a:v1"}, {Name: "b", ValuesKey: "b", Ref: "registry.local:5000/b@sha256:" + strings.Repeat("0", 64)}},
		},
		{
			name:    "implicit registry",
			set:     Set{{Name: "a", ValuesKey: "a", Ref: "busybox:1"}},
			wantErr: "failed to parse the reference of image a",
		},
		{
			name:    "implicit tag",
			set:     Set{{Name: "a", ValuesKey: "a", Ref: "quay.io/x/a"}},
			wantErr: "failed to parse the reference of image a",
		},
		{
			name:    "duplicate values key",
			set:     Set{{Name: "a", ValuesKey: "k", Ref: "quay.io/x/a:v1"}, {Name: "b", ValuesKey: "k", Ref: "quay.io/x/b:v1"}},
			wantErr: "listed twice",
		},
		{
			name:    "no values key",
			set:     Set{{Name: "a", Ref: "quay.io/x/a:v1"}},
			wantErr: "no name or values key",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.set.Validate()
			if tt.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestPinned(t *testing.T) {
	for k := range table {
		if _, err := Pinned(k.component, k.version); err != nil {
			t.Errorf("%s %s: %v", k.component, k.version, err)
		}
	}
	if _, err := Pinned("kubevirt", "v0.1.0"); err == nil {
		t.Error("an unpinned version was found")
	}
}

func TestRefsAreSortedAndDistinct(t *testing.T) {
	set := Set{
		{Name: "b", ValuesKey: "b", Ref: "quay.io/x/b:v1"},
		{Name: "a", ValuesKey: "a", Ref: "quay.io/x/a:v1"},
		{Name: "a2", ValuesKey: "a2", Ref: "quay.io/x/a:v1"},
	}
	if diff := cmp.Diff([]string{"quay.io/x/a:v1", "quay.io/x/b:v1"}, set.Refs()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestKubeVirtEnvVars(t *testing.T) {
	set := KubeVirt("reg.local/kv", "v1.2.3")
	img, ok := set.ByEnvVar("VIRT_LAUNCHER_IMAGE")
	if !ok || img.Ref != "reg.local/kv/virt-launcher:v1.2.3" || !img.RunTime {
		t.Errorf("VIRT_LAUNCHER_IMAGE -> %+v, %t", img, ok)
	}
	op, _ := set.ByEnvVar("VIRT_OPERATOR_IMAGE")
	if op.RunTime {
		t.Error("the operator image is marked as deployed at run time")
	}
}

// TestKubeVirtCSIMatchesAddons keeps the pinned CSI images equal to the
// defaults infra-controller deploys when no image is passed.
func TestKubeVirtCSIMatchesAddons(t *testing.T) {
	set, err := Pinned("infra-controller", "v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, img := range set {
		if img.RunTime {
			got[img.ValuesKey] = img.Ref
		}
	}
	want := map[string]string{
		"csiDriver":              addons.DefaultDriverImage,
		"csiNodeDriverRegistrar": addons.DefaultRegistrarImage,
		"csiLivenessProbe":       addons.DefaultLivenessProbeImage,
		"csiProvisioner":         addons.DefaultProvisionerImage,
		"csiAttacher":            addons.DefaultAttacherImage,
		"csiResizer":             addons.DefaultResizerImage,
		"csiSnapshotter":         addons.DefaultSnapshotterImage,
		"ccm":                    addons.DefaultCCMImage,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("run-time images of infra-controller (-addons defaults +table):\n%s", diff)
	}
}
