package mirror_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/registrytest"
)

func TestPullAndCopy(t *testing.T) {
	refs := []string{"quay.io/kubevirt/virt-api:v1.9.0", "quay.io/kubevirt/virt-controller:v1.9.0", "ghcr.io/org/multus:v4"}
	upstream := registrytest.Start(t)
	imgs := registrytest.Images(t, refs, 2048, 512)
	upstream.Serve(t, imgs)
	private := registrytest.Start(t)
	dst := mirror.Registry{Host: private.Host, Prefix: "mirror"}
	opts := mirror.Options{Jobs: 2, Backoff: time.Millisecond}

	items, err := mirror.Pull(t.Context(), refs, upstream.Mirrors(), opts)
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	opts.Progress = &progress
	private.FailUploads(2)
	if err := mirror.Copy(t.Context(), items, dst, opts); err != nil {
		t.Fatalf("copy with transient failures: %v", err)
	}
	if got := private.Counts().Failed; got != 2 {
		t.Errorf("%d injected failures were hit, want 2", got)
	}
	if n := strings.Count(progress.String(), "pushed "); n != len(refs) {
		t.Errorf("progress:\n%s", progress.String())
	}
	for _, ref := range refs {
		target := registrytest.Relocated(t, dst, ref)
		got, err := remote.Image(target)
		if err != nil {
			t.Fatalf("%s is not in the private registry: %v", target, err)
		}
		gotDigest, _ := got.Digest()
		wantDigest, _ := imgs[ref].Digest()
		if gotDigest != wantDigest {
			t.Errorf("%s has digest %s, want %s", target, gotDigest, wantDigest)
		}
	}

	private.ResetCounts()
	if err := mirror.Copy(t.Context(), items, dst, opts); err != nil {
		t.Fatal(err)
	}
	if c := private.Counts(); c.BlobUploads != 0 {
		t.Errorf("the second copy uploaded %d blobs, want none (%+v)", c.BlobUploads, c)
	}
}

func TestCopyGivesUpNamingTheImage(t *testing.T) {
	upstream := registrytest.Start(t)
	refs := []string{"quay.io/kubevirt/virt-api:v1.9.0"}
	upstream.Serve(t, registrytest.Images(t, refs, 256, 256))
	items, err := mirror.Pull(t.Context(), refs, upstream.Mirrors(), mirror.Options{})
	if err != nil {
		t.Fatal(err)
	}
	private := registrytest.Start(t)
	private.FailUploads(1000)
	err = mirror.Copy(t.Context(), items, mirror.Registry{Host: private.Host}, mirror.Options{Attempts: 2, Backoff: time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "failed to push quay.io/kubevirt/virt-api:v1.9.0") {
		t.Fatalf("got %v", err)
	}
}
