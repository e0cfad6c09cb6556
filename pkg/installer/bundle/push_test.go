package bundle

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/registrytest"
)

func TestExtractAndPush(t *testing.T) {
	_, items := upstream(t)
	file := filepath.Join(t.TempDir(), "bundle.tar.zst")
	create(t, items, file, CompressionZstd)
	dir := t.TempDir()
	v, err := Extract(file, dir, func(name string) bool { return !strings.HasPrefix(name, ChartsDir+"/") })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := filepath.Glob(filepath.Join(dir, ChartsDir, "*")); err != nil {
		t.Fatal(err)
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, ChartsDir, "*")); len(matches) != 0 {
		t.Errorf("filtered files were extracted: %v", matches)
	}
	stored, err := Images(dir)
	if err != nil {
		t.Fatal(err)
	}
	private := registrytest.Start(t)
	dst := mirror.Registry{Host: private.Host, Prefix: "airgap"}
	opts := mirror.Options{Jobs: 3, Backoff: time.Millisecond}
	if err := mirror.Copy(t.Context(), stored, dst, opts); err != nil {
		t.Fatal(err)
	}
	first := private.Counts()
	// Each image is its own repository: at most a base layer, an own
	// layer and a config each.
	if first.BlobUploads == 0 || first.BlobUploads > 12 || first.ManifestPuts != 4 {
		t.Errorf("first push: %+v, want 1 to 12 blob uploads and 4 manifests", first)
	}
	for _, img := range v.Metadata.Images {
		ref := registrytest.Relocated(t, dst, img.Ref)
		desc, err := remote.Head(ref)
		if err != nil {
			t.Fatalf("%s was not pushed: %v", ref, err)
		}
		if desc.Digest.String() != img.Digest {
			t.Errorf("%s has digest %s, the bundle %s", ref, desc.Digest, img.Digest)
		}
	}
	private.ResetCounts()
	if err := mirror.Copy(t.Context(), stored, dst, opts); err != nil {
		t.Fatal(err)
	}
	if c := private.Counts(); c.BlobUploads != 0 {
		t.Errorf("the second push uploaded %d blobs, want none (%+v)", c.BlobUploads, c)
	}
}
