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

// TestProvesDigest: only blobs hashed in memory skip the hash; a remote
// layer's reader does not.
func TestProvesDigest(t *testing.T) {
	if !provesDigest(hashedBlob{bytes.NewReader([]byte("{}"))}) {
		t.Error("a hashedBlob is not taken to prove its digest")
	}
	_, items := upstream(t)
	layers, err := items[0].Image.Layers()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := layers[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	if provesDigest(rc) {
		t.Errorf("the reader of a remote layer (%T) is taken to prove its digest", rc)
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

func TestCreateRefusesATamperedDownload(t *testing.T) {
	reg := registrytest.Start(t)
	reg.Serve(t, registrytest.Images(t, testRefs[:1], 4096, 1024))
	var on atomic.Bool
	items, err := mirror.Pull(t.Context(), testRefs[:1], reg.Mirrors(), mirror.Options{Transport: tamperingTransport{on: &on}})
	if err != nil {
		t.Fatal(err)
	}
	on.Store(true)
	out := filepath.Join(t.TempDir(), "bundle.tar")
	if _, err := Create(t.Context(), CreateOptions{Output: out, Images: items}); err == nil {
		t.Fatal("Create stored a layer whose download was altered")
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
