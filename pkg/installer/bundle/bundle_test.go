package bundle

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/registrytest"
)

var testRefs = []string{
	"quay.io/kubevirt/virt-api:v1.9.0",
	"quay.io/kubevirt/virt-handler:v1.9.0",
	"ghcr.io/k8snetworkplumbingwg/multus-cni:v4.3.0-thick",
	"docker.io/rancher/hardened-cni-plugins:v1.9.0-build20260206",
}

var testCharts = fstest.MapFS{
	"demo/Chart.yaml":            {Data: []byte("apiVersion: v2\nname: demo\nversion: 0.1.0\n")},
	"demo/templates/config.yaml": {Data: []byte("kind: ConfigMap\n")},
}

// upstream serves random images for testRefs and returns their items.
func upstream(t *testing.T) (*registrytest.Registry, []mirror.Item) {
	t.Helper()
	reg := registrytest.Start(t)
	reg.Serve(t, registrytest.Images(t, testRefs, 4096, 1024))
	items, err := mirror.Pull(t.Context(), testRefs, reg.Mirrors(), mirror.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return reg, items
}

func create(t *testing.T, items []mirror.Item, out string, compression Compression) *Result {
	t.Helper()
	res, err := Create(t.Context(), CreateOptions{
		Output: out, Compression: compression, Charts: testCharts, Images: items, Platforms: []string{"linux/amd64"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestCreateVerifyAndResume(t *testing.T) {
	_, items := upstream(t)
	for _, compression := range []Compression{CompressionNone, CompressionGzip, CompressionZstd} {
		t.Run(string(compression), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "bundle.tar")
			var progress bytes.Buffer
			first, err := Create(t.Context(), CreateOptions{
				Output: out, Compression: compression, Charts: testCharts, Images: items, Platforms: []string{"linux/amd64"}, Progress: &progress,
			})
			if err != nil {
				t.Fatal(err)
			}
			// Four images share one base layer: 1 base + 4 own layers + 4
			// configs + 4 manifests.
			if first.Images != 4 || first.Blobs != 13 || first.BytesReused != 0 {
				t.Errorf("first create: %+v", first)
			}
			if saved := first.ImageBytes - first.StoredBytes; saved < 3*4096 {
				t.Errorf("deduplication saved %d bytes, want at least three copies of the base layer", saved)
			}
			if !strings.Contains(progress.String(), "image 4/4 quay.io/kubevirt/virt-handler:v1.9.0") {
				t.Errorf("progress:\n%s", progress.String())
			}
			second := create(t, items, out, compression)
			if second.BytesFetched != 0 || second.BytesReused != first.BytesFetched {
				t.Errorf("resumed create fetched %d bytes and reused %d, want 0 and %d", second.BytesFetched, second.BytesReused, first.BytesFetched)
			}
			if second.Checksum != first.Checksum {
				t.Errorf("checksum changed from %s to %s for the same content", first.Checksum, second.Checksum)
			}
			v, err := Verify(out)
			if err != nil {
				t.Fatal(err)
			}
			if v.Checksum != first.Checksum || v.Files != first.Files {
				t.Errorf("verify: %+v, created %+v", v, first)
			}
			if diff := cmp.Diff(slices.Sorted(slices.Values(testRefs)), v.Metadata.Refs()); diff != "" {
				t.Errorf("refs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCreateRefetchesACorruptBlob(t *testing.T) {
	_, items := upstream(t)
	out := filepath.Join(t.TempDir(), "bundle.tar")
	first := create(t, items, out, CompressionNone)
	blobs, err := filepath.Glob(filepath.Join(out+".work", "images", "blobs", "sha256", "*"))
	if err != nil || len(blobs) == 0 {
		t.Fatalf("no blobs in the work directory: %v", err)
	}
	if err := os.WriteFile(blobs[0], []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	second := create(t, items, out, CompressionNone)
	if second.BytesFetched == 0 || second.Checksum != first.Checksum {
		t.Errorf("second create fetched %d bytes, checksum %s (first %s)", second.BytesFetched, second.Checksum, first.Checksum)
	}
}

// entry is one file of a rewritten bundle; typ and link make it another
// kind of tar entry than a regular file.
type entry struct {
	name string
	data []byte
	typ  byte
	link string
}

// readEntries returns the entries of an uncompressed bundle.
func readEntries(t *testing.T, file string) []entry {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []entry
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, entry{name: hdr.Name, data: data})
	}
}

func writeEntries(t *testing.T, file string, entries []entry) {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Size: int64(len(e.data)), Mode: 0o644, Typeflag: typ, Linkname: e.link}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
