package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
)

// TestBundleCreateRefusesABadPlatform: a --platform that is not
// os/architecture is refused, naming the flag, before anything is pulled.
func TestBundleCreateRefusesABadPlatform(t *testing.T) {
	out, err := execute(t, "bundle", "create", "-o", filepath.Join(t.TempDir(), "b.tar"), "--platform", "linux/amd64,linux")
	if err == nil || !strings.Contains(err.Error(), "--platform") || !strings.Contains(err.Error(), `"linux"`) {
		t.Errorf("error %v, want one naming --platform and the bad value", err)
	}
	if strings.Contains(out, "pulling") {
		t.Errorf("images were pulled before the flag was checked:\n%s", out)
	}
}

// TestBundleReferrersFlag: a cosign signature tag of an upstream image is
// bundled by default, counted by inspect and pushed; --referrers=false
// leaves it out.
func TestBundleReferrersFlag(t *testing.T) {
	upstream, _ := serveUpstream(t)
	releases, err := components.Load(components.Default())
	if err != nil {
		t.Fatal(err)
	}
	var multus string
	for _, ref := range installer.Images(releases) {
		if strings.Contains(ref, "multus-cni") {
			multus = ref
		}
	}
	src, err := upstream.Mirrors().Source(multus)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(src)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(src.Context().Tag("sha256-"+desc.Digest.Hex+".sig"), sig); err != nil {
		t.Fatal(err)
	}
	skip := "--skip=kubevirt,cdi,infra-controller,machine-controller"
	row := regexp.MustCompile(`(?m)^image +\S+multus-cni .* (\d+)$`)
	for _, tc := range []struct {
		flag, want string
	}{{"--referrers=true", "1"}, {"--referrers=false", "0"}} {
		t.Run(tc.flag, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "b.tar")
			if out, err := execute(t, "bundle", "create", "-o", file, skip, tc.flag, pullMirrorFlag(upstream)); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			table, err := execute(t, "bundle", "inspect", file)
			if m := row.FindStringSubmatch(table); err != nil || m == nil || m[1] != tc.want {
				t.Errorf("inspect: %v, want %s referrers for multus:\n%s", err, tc.want, table)
			}
			out, err := execute(t, "bundle", "push", file, "--registry", upstream.Host+"/airgap")
			if err != nil || !strings.Contains(out, "pushed 2 images and "+tc.want+" referrers of") {
				t.Errorf("push: %v\n%s", err, out)
			}
		})
	}
}
