package bundle

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/registrytest"
)

// TestPulledItemsAreFromRegistry: both pulls mark what they read through
// go-containerregistry's remote package, index children and referrers
// included, so Create leaves the digest check of their layers to the
// verifying reader; an item built in memory is not marked and is hashed
// (TestCreateRefusesALayerThatDoesNotMatchItsDigest).
func TestPulledItemsAreFromRegistry(t *testing.T) {
	reg, items := upstream(t)
	for _, item := range items {
		if !item.FromRegistry {
			t.Errorf("mirror.Pull: %s is not marked as read from a registry", item.Ref)
		}
	}
	pulled, err := Pull(t.Context(), testRefs[:1], reg.Mirrors(), PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pulled) != 1 || !pulled[0].FromRegistry {
		t.Errorf("bundle.Pull: %+v, want one item marked as read from a registry", pulled)
	}
}

// lyingLayer claims the digest of the layer it embeds but returns other
// content.
type lyingLayer struct{ v1.Layer }

func (lyingLayer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader([]byte("not the layer"))), nil
}

func TestCreateRefusesALayerThatDoesNotMatchItsDigest(t *testing.T) {
	layer, err := random.Layer(256, types.DockerLayer)
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, lyingLayer{layer})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "bundle.tar")
	_, err = Create(t.Context(), CreateOptions{Output: out, Images: []mirror.Item{{Ref: "quay.io/kubevirt/lying:v1", Image: img}}})
	if err == nil || !strings.Contains(err.Error(), "arrived with digest") {
		t.Fatalf("Create of a layer with other content than its digest: %v, want an \"arrived with digest\" error", err)
	}
}

// tamperingTransport flips the first byte of every blob response once on
// is set.
type tamperingTransport struct {
	on *atomic.Bool
}

func (tt tamperingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := remote.DefaultTransport.RoundTrip(req)
	if err != nil || !tt.on.Load() || !strings.Contains(req.URL.Path, "/blobs/") || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	data, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if len(data) > 0 {
		data[0] ^= 0xff
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return resp, nil
}

// TestCreateRefusesATamperedDownload: a layer whose bytes are altered on
// the way from the registry is refused and never stored, for the items of
// either pull. Create does not hash such layers itself, so this is what
// holds go-containerregistry to verifying them.
func TestCreateRefusesATamperedDownload(t *testing.T) {
	pulls := map[string]func(mirror.Mirrors, mirror.Options) ([]mirror.Item, error){
		"mirror.Pull": func(m mirror.Mirrors, o mirror.Options) ([]mirror.Item, error) {
			return mirror.Pull(t.Context(), testRefs[:1], m, o)
		},
		"bundle.Pull": func(m mirror.Mirrors, o mirror.Options) ([]mirror.Item, error) {
			return Pull(t.Context(), testRefs[:1], m, PullOptions{Transfer: o})
		},
	}
	for name, pull := range pulls {
		t.Run(name, func(t *testing.T) { checkTamperedDownloadRefused(t, pull) })
	}
}

func checkTamperedDownloadRefused(t *testing.T, pull func(mirror.Mirrors, mirror.Options) ([]mirror.Item, error)) {
	t.Helper()
	reg := registrytest.Start(t)
	reg.Serve(t, registrytest.Images(t, testRefs[:1], 4096, 1024))
	var on atomic.Bool
	items, err := pull(reg.Mirrors(), mirror.Options{Transport: tamperingTransport{on: &on}})
	if err != nil {
		t.Fatal(err)
	}
	on.Store(true)
	out := filepath.Join(t.TempDir(), "bundle.tar")
	_, err = Create(t.Context(), CreateOptions{Output: out, Images: items})
	if err == nil || !strings.Contains(err.Error(), "checksum") && !strings.Contains(err.Error(), "arrived with digest") {
		t.Fatalf("Create of a layer whose download was altered: %v, want a digest mismatch", err)
	}
	blobs, err := filepath.Glob(filepath.Join(out+".work", "images", "blobs", "sha256", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range blobs {
		if got, err := sumFile(p); err != nil || got != filepath.Base(p) {
			t.Errorf("work directory holds %s with sha256 %s (%v)", p, got, err)
		}
	}
}

// TestKernelCopiedArchiveIsTheSameTar compares an uncompressed bundle, whose
// blobs the kernel copies into the archive, with the tar inside a gzip
// bundle of the same content, which passes every byte through archive/tar.
func TestKernelCopiedArchiveIsTheSameTar(t *testing.T) {
	_, items := upstream(t)
	dir := t.TempDir()
	plain := filepath.Join(dir, "bundle.tar")
	gz := filepath.Join(dir, "bundle.tar.gz")
	create(t, items, plain, CompressionNone)
	create(t, items, gz, CompressionGzip)
	want := readDecompressed(t, gz)
	got, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the uncompressed bundle (%d bytes) differs from the tar of the gzip bundle (%d bytes)", len(got), len(want))
	}
}

func readDecompressed(t *testing.T, file string) []byte {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	r, _, err := decompress(bufio.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
