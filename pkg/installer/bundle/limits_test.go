package bundle

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// zeros reads zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// sparseBundle writes a tar of a checksums.txt listing name with the
// sha256 of size zero bytes, then name with that content, to a sparse file:
// the content is a hole, which reads as zeros without taking disk space.
func sparseBundle(t *testing.T, name string, size int64) string {
	t.Helper()
	h := sha256.New()
	if _, err := io.CopyN(h, zeros{}, size); err != nil {
		t.Fatal(err)
	}
	list := []byte(fmt.Sprintf("%s  %s\n", hex.EncodeToString(h.Sum(nil)), name))
	var head bytes.Buffer
	tw := tar.NewWriter(&head)
	if err := tw.WriteHeader(&tar.Header{Name: ChecksumsFile, Size: int64(len(list)), Mode: 0o644, Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(list); err != nil {
		t.Fatal(err)
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Size: size, Mode: 0o644, Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	return sparseFile(t, head.Bytes(), size)
}

// sparseFile writes head followed by size zero bytes and the two zero
// blocks that end a tar archive, the zeros as a hole.
func sparseFile(t *testing.T, head []byte, size int64) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "bundle.tar")
	if err := os.WriteFile(file, head, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(file, int64(len(head))+size+2*512); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestTooLargeFilesAreReportedAsSuch: a file the installer reads into
// memory that is larger than its bound is refused as too large, with the
// limit, and not as changed (its checksum is right: it was read only up to
// the bound and then differed).
func TestTooLargeFilesAreReportedAsSuch(t *testing.T) {
	for _, tt := range []struct {
		name string
		file string
		want string
	}{
		{"a 100 MiB bundle.json", sparseBundle(t, MetadataFile, 100<<20), "bundle.json is too large: 100 MiB, more than the 16 MiB limit of a file the installer reads into memory"},
		{"a 100 MiB SBOM", sparseBundle(t, SBOMFile, 100<<20), "sbom.cdx.json is too large: 100 MiB, more than the 16 MiB limit"},
		{"a 17 MiB checksums.txt", checksumsOnly(t, 17<<20), "checksums.txt is too large: 17 MiB, more than the 16 MiB limit"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Verify(tt.file)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "changed") {
				t.Errorf("error %v, want one containing %q and not \"changed\"", err, tt.want)
			}
		})
	}
}

// checksumsOnly writes a bundle whose first entry, checksums.txt, has size
// zero bytes.
func checksumsOnly(t *testing.T, size int64) string {
	t.Helper()
	var head bytes.Buffer
	if err := tar.NewWriter(&head).WriteHeader(&tar.Header{Name: ChecksumsFile, Size: size, Mode: 0o644, Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	return sparseFile(t, head.Bytes(), size)
}
