package mirror_test

import (
	"fmt"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/registrytest"
)

// TestCopyUploadsASharedLayerOnce copies images that share a base layer,
// each to its own repository of a registry that keeps blobs per repository,
// several at a time: the base is uploaded once and mounted into the other
// repositories, and every copied image is complete in its repository.
func TestCopyUploadsASharedLayerOnce(t *testing.T) {
	const n = 6
	refs := make([]string, n)
	for i := range refs {
		refs[i] = fmt.Sprintf("quay.io/kubevirt/shared-%d:v1", i)
	}
	upstream := registrytest.Start(t)
	upstream.Serve(t, registrytest.Images(t, refs, 64<<10, 1024))
	items, err := mirror.Pull(t.Context(), refs, upstream.Mirrors(), mirror.Options{})
	if err != nil {
		t.Fatal(err)
	}
	private := registrytest.Start(t, registrytest.WithRepositoryBlobs())
	dst := mirror.Registry{Host: private.Host}
	if err := mirror.Copy(t.Context(), items, dst, mirror.Options{Jobs: 3}); err != nil {
		t.Fatal(err)
	}
	// Each image has its own layer and config, and shares the base.
	if c := private.Counts(); c.BlobUploads != 2*n+1 || c.Mounts != n-1 {
		t.Errorf("%d blob uploads and %d mounts, want %d and %d (%+v)", c.BlobUploads, c.Mounts, 2*n+1, n-1, c)
	}
	for _, ref := range refs {
		target := registrytest.Relocated(t, dst, ref)
		img, err := remote.Image(target)
		if err != nil {
			t.Fatalf("%s is not in the private registry: %v", target, err)
		}
		if err := validate.Image(img); err != nil {
			t.Errorf("%s is incomplete: %v", target, err)
		}
	}
}
