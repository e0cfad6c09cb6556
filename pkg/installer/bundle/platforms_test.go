package bundle

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/registrytest"
)

const indexRef = "quay.io/kubevirt/virt-api:v1.9.0"

// platformImage is a random image whose config names platform.
func platformImage(t *testing.T, platform string) v1.Image {
	t.Helper()
	img, err := random.Image(512, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := v1.ParsePlatform(platform)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Variant = p.OS, p.Architecture, p.Variant
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		t.Fatal(err)
	}
	return img
}

// platformIndex is an index of one random image per platform.
func platformIndex(t *testing.T, platforms ...string) v1.ImageIndex {
	t.Helper()
	var adds []mutate.IndexAddendum
	for _, platform := range platforms {
		p, err := v1.ParsePlatform(platform)
		if err != nil {
			t.Fatal(err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: platformImage(t, platform), Descriptor: v1.Descriptor{Platform: p}})
	}
	return mutate.AppendManifests(empty.Index, adds...)
}

// serve writes content (an image or an index) to reg under the path its
// mirrors give ref, and returns that source reference.
func serve(t *testing.T, reg *registrytest.Registry, ref string, content remote.Taggable) name.Reference {
	t.Helper()
	src, err := reg.Mirrors().Source(ref)
	if err != nil {
		t.Fatal(err)
	}
	if idx, ok := content.(v1.ImageIndex); ok {
		err = remote.WriteIndex(src, idx)
	} else {
		err = remote.Write(src, content.(v1.Image))
	}
	if err != nil {
		t.Fatalf("failed to serve %s: %v", ref, err)
	}
	return src
}

// bundleOf pulls refs from reg and writes them to a bundle for platforms.
func bundleOf(t *testing.T, reg *registrytest.Registry, refs []string, referrers bool, platforms ...string) (string, error) {
	t.Helper()
	items, err := Pull(t.Context(), refs, reg.Mirrors(), PullOptions{Referrers: referrers})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "bundle.tar")
	_, err = Create(t.Context(), CreateOptions{Output: file, Images: items, Platforms: platforms})
	return file, err
}

// pushBundle extracts file and copies its images to a new registry under
// the prefix "airgap".
func pushBundle(t *testing.T, file string, opts ...registrytest.Option) (*registrytest.Registry, mirror.Registry) {
	t.Helper()
	items := extracted(t, file)
	private := registrytest.Start(t, opts...)
	dst := mirror.Registry{Host: private.Host, Prefix: "airgap"}
	if err := mirror.Copy(t.Context(), items, dst, mirror.Options{Backoff: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	return private, dst
}

// extracted returns the images of the bundle file.
func extracted(t *testing.T, file string) []mirror.Item {
	t.Helper()
	dir := t.TempDir()
	if _, err := Extract(file, dir, nil); err != nil {
		t.Fatal(err)
	}
	items, err := Images(dir)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// pushedIndex returns the index ref was pushed as to dst.
func pushedIndex(t *testing.T, dst mirror.Registry, ref string) (v1.Hash, *v1.IndexManifest) {
	t.Helper()
	target := registrytest.Relocated(t, dst, ref)
	idx, err := remote.Index(target)
	if err != nil {
		t.Fatalf("%s was not pushed: %v", target, err)
	}
	digest, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range manifest.Manifests {
		if _, err := idx.Image(d.Digest); err != nil {
			t.Errorf("manifest %s of %s is not on the mirror: %v", d.Platform, target, err)
		}
	}
	return digest, manifest
}

// servedIndex serves a linux/amd64 and linux/arm64 index at indexRef and
// returns its digest.
func servedIndex(t *testing.T) (*registrytest.Registry, v1.Hash) {
	t.Helper()
	reg := registrytest.Start(t)
	idx := platformIndex(t, "linux/amd64", "linux/arm64")
	serve(t, reg, indexRef, idx)
	upstream, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return reg, upstream
}

// TestIndexWithEveryPlatformIsKeptIntact: with every platform of an index
// chosen, the bundle stores the index byte for byte and the mirror reports
// the upstream digest after the push.
func TestIndexWithEveryPlatformIsKeptIntact(t *testing.T) {
	reg, upstream := servedIndex(t)
	file, err := bundleOf(t, reg, []string{indexRef}, true, "linux/amd64", "linux/arm64")
	if err != nil {
		t.Fatal(err)
	}
	v, err := Verify(file)
	if err != nil {
		t.Fatal(err)
	}
	want := []ImageEntry{{
		Ref: indexRef, Digest: upstream.String(), MediaType: string(types.OCIImageIndex),
		Platforms: []string{"linux/amd64", "linux/arm64"},
	}}
	if diff := cmp.Diff(want, v.Metadata.Images); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	_, dst := pushBundle(t, file)
	pushed, manifest := pushedIndex(t, dst, indexRef)
	if pushed != upstream || len(manifest.Manifests) != 2 {
		t.Errorf("the mirror has index %s with %d manifests, want the upstream %s with 2", pushed, len(manifest.Manifests), upstream)
	}
}

// TestIndexWithSomePlatformsIsFiltered: with one platform of two chosen,
// the bundle stores a filtered index, records the upstream digest and the
// kept platform, and pushes the filtered index as it is stored.
func TestIndexWithSomePlatformsIsFiltered(t *testing.T) {
	reg, upstream := servedIndex(t)
	file, err := bundleOf(t, reg, []string{indexRef}, true, "linux/arm64")
	if err != nil {
		t.Fatal(err)
	}
	v, err := Verify(file)
	if err != nil {
		t.Fatal(err)
	}
	img := v.Metadata.Images[0]
	if img.UpstreamDigest != upstream.String() || img.Digest == upstream.String() || !slices.Equal(img.Platforms, []string{"linux/arm64"}) {
		t.Errorf("metadata %+v, want a filtered index of linux/arm64 with upstream digest %s", img, upstream)
	}
	if !slices.Equal(v.Metadata.Platforms, []string{"linux/arm64"}) {
		t.Errorf("bundle platforms %v, want [linux/arm64]", v.Metadata.Platforms)
	}
	_, dst := pushBundle(t, file)
	pushed, manifest := pushedIndex(t, dst, indexRef)
	if pushed.String() != img.Digest || len(manifest.Manifests) != 1 || manifest.Manifests[0].Platform.String() != "linux/arm64" {
		t.Errorf("the mirror has index %s with %+v, want %s with only linux/arm64", pushed, manifest.Manifests, img.Digest)
	}
}

// TestPlatformNotAvailable: a single-platform image for another platform
// and an index without a chosen platform are refused, naming the image and
// the platforms it has.
func TestPlatformNotAvailable(t *testing.T) {
	reg := registrytest.Start(t)
	single := "quay.io/kubevirt/virt-handler:v1.9.0"
	serve(t, reg, single, platformImage(t, "linux/arm64/v8"))
	serve(t, reg, indexRef, platformIndex(t, "linux/amd64", "linux/arm64"))
	for _, tc := range []struct {
		ref       string
		platforms []string
		want      []string
	}{
		{single, nil, []string{single, "linux/arm64/v8", "linux/amd64"}},
		{indexRef, []string{"linux/s390x"}, []string{indexRef, "no platform linux/s390x", "linux/amd64, linux/arm64"}},
	} {
		_, err := bundleOf(t, reg, []string{tc.ref}, false, tc.platforms...)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("bundle of %s for %v: error %v, want one naming %q", tc.ref, tc.platforms, err, w)
			}
		}
	}
	if _, err := bundleOf(t, reg, []string{single}, false, "linux/arm64"); err != nil {
		t.Errorf("linux/arm64 does not take the linux/arm64/v8 image: %v", err)
	}
}

// TestVerifyRefusesAMissingPlatform: verify refuses a bundle whose
// bundle.json claims a platform the stored index lacks, whether the claim
// was added or the platform's manifest removed, with checksums.txt
// rewritten to match.
func TestVerifyRefusesAMissingPlatform(t *testing.T) {
	reg := registrytest.Start(t)
	serve(t, reg, indexRef, platformIndex(t, "linux/amd64", "linux/arm64"))
	full, err := bundleOf(t, reg, []string{indexRef}, false, "linux/amd64,linux/arm64")
	if err != nil {
		t.Fatal(err)
	}
	filtered, err := bundleOf(t, reg, []string{indexRef}, false, "linux/arm64")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("claim added", func(t *testing.T) {
		entries := readEntries(t, filtered)
		for i, e := range entries {
			if e.name == MetadataFile {
				var meta Metadata
				if err := json.Unmarshal(e.data, &meta); err != nil {
					t.Fatal(err)
				}
				meta.Images[0].Platforms = append(meta.Images[0].Platforms, "linux/amd64")
				if entries[i].data, err = json.Marshal(meta); err != nil {
					t.Fatal(err)
				}
			}
		}
		checkMissingPlatform(t, rechecksum(t, entries))
	})
	t.Run("manifest removed", func(t *testing.T) {
		amd64 := platformManifest(t, full, "linux/amd64")
		var kept []entry
		for _, e := range readEntries(t, full) {
			if e.name != blobsDir+amd64 {
				kept = append(kept, e)
			}
		}
		checkMissingPlatform(t, rechecksum(t, kept))
	})
}

func checkMissingPlatform(t *testing.T, file string) {
	t.Helper()
	_, err := Verify(file)
	if err == nil || !strings.Contains(err.Error(), indexRef+" claims platform linux/amd64 but stores only [linux/arm64]") {
		t.Errorf("verify: %v, want a refusal naming the image and the missing platform", err)
	}
}

// platformManifest returns the hex digest of the manifest of platform in
// the index of the bundle file.
func platformManifest(t *testing.T, file, platform string) string {
	t.Helper()
	manifest, err := extracted(t, file)[0].Index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range manifest.Manifests {
		if d.Platform.String() == platform {
			return d.Digest.Hex
		}
	}
	t.Fatalf("the index has no %s", platform)
	return ""
}

// rechecksum writes entries, checksums.txt first and rewritten to match
// the others, to a new bundle file.
func rechecksum(t *testing.T, entries []entry) string {
	t.Helper()
	sums := checksums{}
	for _, e := range entries[1:] {
		sums[e.name] = sumBytes(e.data)
	}
	entries[0].data = sums.encode()
	file := filepath.Join(t.TempDir(), "tampered.tar")
	writeEntries(t, file, entries)
	return file
}
