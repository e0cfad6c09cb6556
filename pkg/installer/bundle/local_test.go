package bundle

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/registrytest"
)

const ourRef = "ghcr.io/kubevirt-kkp/machine-controller:v0.1.0"

// TestBundleTakesOurImagesFromTheLayout: an index make images wrote to an
// OCI layout, with a signature, is taken from there for the reference by
// digest a release pins, stored whole although one platform is chosen,
// and pushed with its signature under its digest; a reference the layout
// does not hold, or by another digest, is left to pull.
func TestBundleTakesOurImagesFromTheLayout(t *testing.T) {
	idx := platformIndex(t, "linux/amd64", "linux/arm64")
	digest, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	sig, err := random.Image(128, 1)
	if err != nil {
		t.Fatal(err)
	}
	sigTag := "ghcr.io/kubevirt-kkp/machine-controller:sha256-" + digest.Hex + ".sig"
	dir := filepath.Join(t.TempDir(), "images")
	if err := WriteLayout(dir, []mirror.Item{{Ref: ourRef, Index: idx, Referrers: []mirror.Item{{Ref: sigTag, Image: sig}}}}); err != nil {
		t.Fatal(err)
	}
	pinned := ourRef + "@" + digest.String()
	// Another digest: the last hex digit changed (the index is random, so
	// its own last digit is "0" once in 16 runs).
	last := "0"
	if digest.Hex[63] == '0' {
		last = "1"
	}
	otherDigest := "ghcr.io/kubevirt-kkp/machine-controller@sha256:" + digest.Hex[:63] + last
	local, rest, err := FromLayout(dir, []string{pinned, "quay.io/kubevirt/virt-api:v1.9.0", otherDigest})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"quay.io/kubevirt/virt-api:v1.9.0", otherDigest}; !slices.Equal(rest, want) {
		t.Errorf("left to pull %v, want %v", rest, want)
	}
	if len(local) != 1 || local[0].Ref != pinned || len(local[0].Referrers) != 1 {
		t.Fatalf("taken from the layout: %+v, want %s with its signature", local, pinned)
	}

	file := filepath.Join(t.TempDir(), "bundle.tar")
	if _, err := Create(t.Context(), CreateOptions{Output: file, Images: local, Platforms: []string{"linux/amd64"}}); err != nil {
		t.Fatal(err)
	}
	v, err := Verify(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Metadata.Images[0]; got.Digest != digest.String() || len(got.Referrers) != 1 {
		t.Errorf("the bundle stores %+v, want the index %s whole with its signature", got, digest)
	}
	_, dst := pushBundle(t, file)
	pushed, manifest := pushedIndex(t, dst, pinned)
	if pushed != digest || len(manifest.Manifests) != 2 {
		t.Errorf("pushed %s with %d manifests, want %s with both platforms", pushed, len(manifest.Manifests), digest)
	}
	target := registrytest.Relocated(t, dst, pinned)
	if _, err := remote.Head(target.Context().Tag("sha256-" + digest.Hex + ".sig")); err != nil {
		t.Errorf("the signature was not pushed: %v", err)
	}
}
