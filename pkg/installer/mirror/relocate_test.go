package mirror

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/images"
)

func TestRelocate(t *testing.T) {
	digest := "sha256:" + strings.Repeat("a", 64)
	tests := []struct {
		registry, ref, want string
	}{
		{"reg.local:5000/mirror", "quay.io/kubevirt/virt-api:v1.9.0", "reg.local:5000/mirror/kubevirt/virt-api:v1.9.0"},
		{"reg.local:5000", "quay.io/kubevirt/virt-api:v1.9.0", "reg.local:5000/kubevirt/virt-api:v1.9.0"},
		{"reg.local/a/b/", "docker.io/rancher/hardened-cni-plugins:v1", "reg.local/a/b/rancher/hardened-cni-plugins:v1"},
		{"reg.local", "ghcr.io/org/img@" + digest, "reg.local/org/img@" + digest},
	}
	for _, tt := range tests {
		r, err := ParseRegistry(tt.registry)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Relocate(tt.ref)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("%s relocated to %s = %s, want %s", tt.ref, tt.registry, got, tt.want)
		}
	}
}

func TestParseRegistryErrors(t *testing.T) {
	for _, in := range []string{"", "https://reg.local", "reg local/x", "reg.local/UPPER"} {
		if _, err := ParseRegistry(in); err == nil {
			t.Errorf("%q was accepted", in)
		}
	}
}

func TestRelocateSetKeepsEnvVarsAndLeavesTheInputAlone(t *testing.T) {
	set := images.KubeVirt("quay.io/kubevirt", "v1.9.0")
	r := Registry{Host: "reg.local:5000", Prefix: "mirror"}
	moved, err := r.RelocateSet(set)
	if err != nil {
		t.Fatal(err)
	}
	launcher, _ := moved.ByEnvVar("VIRT_LAUNCHER_IMAGE")
	if launcher.Ref != "reg.local:5000/mirror/kubevirt/virt-launcher:v1.9.0" {
		t.Errorf("launcher relocated to %s", launcher.Ref)
	}
	orig, _ := set.ByEnvVar("VIRT_LAUNCHER_IMAGE")
	if orig.Ref != "quay.io/kubevirt/virt-launcher:v1.9.0" {
		t.Errorf("the input set changed: %s", orig.Ref)
	}
	if diff := cmp.Diff(len(set), len(moved)); diff != "" {
		t.Error(diff)
	}
}

func TestMirrorsSource(t *testing.T) {
	m, err := ParseMirrors(map[string]string{"docker.io": "cache.local/hub", "quay.io": "cache.local/quay"})
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]string{
		"docker.io/rancher/x:v1":       "cache.local/hub/rancher/x:v1",
		"quay.io/kubevirt/virt-api:v1": "cache.local/quay/kubevirt/virt-api:v1",
		"ghcr.io/org/y:v2":             "ghcr.io/org/y:v2",
	}
	for ref, want := range tests {
		got, err := m.Source(ref)
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != want {
			t.Errorf("source of %s = %s, want %s", ref, got, want)
		}
	}
}
