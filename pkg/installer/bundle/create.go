package bundle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/filelimit"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
)

// CreateOptions are the inputs of Create.
type CreateOptions struct {
	// Output is the bundle file to write.
	Output string
	// WorkDir is where the bundle is assembled; blobs already in it are
	// reused, which makes an interrupted Create resumable. Empty means
	// Output + ".work".
	WorkDir string
	// Compression compresses the bundle; empty is CompressionNone.
	Compression Compression
	// Charts holds one directory per chart; every file goes to charts/.
	Charts fs.FS
	// Images are the images to store.
	Images []mirror.Item
	// Platforms are the platforms to store of each image index, as
	// os/architecture[/variant]; none is DefaultPlatform. A single-platform
	// image for another platform is an error.
	Platforms []string
	// Progress receives a line per image and a summary; nil discards them.
	Progress io.Writer
	// Signer signs checksums.txt into checksums.txt.sig; nil leaves the
	// bundle unsigned.
	Signer signature.Signer
}

// Result summarizes a created bundle.
type Result struct {
	// Checksum is the aggregate checksum: the sha256 of checksums.txt.
	Checksum string
	// Files is the number of files in the bundle.
	Files int
	// Images is the number of stored images.
	Images int
	// Blobs is the number of distinct blobs stored.
	Blobs int
	// BytesFetched is what was downloaded; BytesReused what was already in
	// the work directory.
	BytesFetched, BytesReused int64
	// ImageBytes is the size of every image's blobs added up, shared blobs
	// counted once per image; StoredBytes counts each blob once. Their
	// difference is what deduplication saved.
	ImageBytes, StoredBytes int64
	// Size is the size of the bundle file.
	Size int64
	// Signed tells that the bundle holds a signature.
	Signed bool
}

// Create assembles a bundle of opts.Charts and opts.Images in the work
// directory and writes it to opts.Output.
func Create(ctx context.Context, opts CreateOptions) (*Result, error) {
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.WorkDir == "" {
		opts.WorkDir = opts.Output + ".work"
	}
	b := &builder{dir: opts.WorkDir, progress: opts.Progress, sums: checksums{}, blobs: map[string]int64{}}
	if err := b.writeCharts(opts.Charts); err != nil {
		return nil, err
	}
	platforms, err := ParsePlatforms(opts.Platforms)
	if err != nil {
		return nil, err
	}
	meta, err := b.writeImages(ctx, opts.Images, platforms)
	if err != nil {
		return nil, err
	}
	meta.Platforms, meta.Charts = platformStrings(platforms), b.charts
	if err := b.writeDescriptions(meta); err != nil {
		return nil, err
	}
	list := b.sums.encode()
	var sig []byte
	if opts.Signer != nil {
		if sig, err = signChecksums(opts.Signer, list); err != nil {
			return nil, err
		}
	}
	if err := b.writeTar(opts.Output, list, sig, opts.Compression); err != nil {
		return nil, err
	}
	st, err := os.Stat(opts.Output)
	if err != nil {
		return nil, fmt.Errorf("failed to stat %s: %w", opts.Output, err)
	}
	b.result.Checksum = "sha256:" + sumBytes(list)
	b.result.Files = len(b.sums) + 1
	b.result.Images = len(meta.Images)
	b.result.Blobs = len(b.blobs)
	b.result.Size = st.Size()
	b.result.Signed = sig != nil
	fmt.Fprintf(opts.Progress, "wrote %s: %d images, %d blobs, %s (deduplication saved %s), checksum %s\n",
		opts.Output, b.result.Images, b.result.Blobs, filelimit.Bytes(b.result.Size),
		filelimit.Bytes(b.result.ImageBytes-b.result.StoredBytes), b.result.Checksum)
	return &b.result, nil
}

// writeDescriptions writes the metadata and the SBOM.
func (b *builder) writeDescriptions(meta *Metadata) error {
	data, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return fmt.Errorf("failed to encode the bundle metadata: %w", err)
	}
	if err := b.writeFile(MetadataFile, append(data, '\n')); err != nil {
		return err
	}
	sbom, err := EncodeSBOM(BuildSBOM(*meta))
	if err != nil {
		return err
	}
	return b.writeFile(SBOMFile, sbom)
}

// builder assembles a bundle in dir.
type builder struct {
	dir      string
	progress io.Writer
	sums     checksums
	// charts are the charts written, by path.
	charts []ChartEntry
	// blobs are the stored blobs by hex digest, with their sizes.
	blobs  map[string]int64
	result Result
}

// writeFile writes a small file of the bundle and records its checksum.
func (b *builder) writeFile(name string, data []byte) error {
	p := filepath.Join(b.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("failed to create the directory of %s: %w", p, err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return fmt.Errorf("failed to write %s: %w", p, err)
	}
	b.sums[name] = sumBytes(data)
	return nil
}

// writeCharts copies every file of charts under charts/, replacing what a
// previous run left.
func (b *builder) writeCharts(charts fs.FS) error {
	if err := os.RemoveAll(filepath.Join(b.dir, ChartsDir)); err != nil {
		return fmt.Errorf("failed to clear the charts of %s: %w", b.dir, err)
	}
	if charts == nil {
		return nil
	}
	err := fs.WalkDir(charts, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(charts, p)
		if err != nil {
			return err
		}
		if path.Base(p) == "Chart.yaml" {
			c, err := parseChart(path.Join(ChartsDir, p), data)
			if err != nil {
				return err
			}
			b.charts = append(b.charts, c)
		}
		return b.writeFile(path.Join(ChartsDir, p), data)
	})
	if err != nil {
		return fmt.Errorf("failed to copy the charts: %w", err)
	}
	return nil
}

// writeSmallBlob stores data, which is held in memory, as a blob and
// returns its digest.
func (b *builder) writeSmallBlob(data []byte) (v1.Hash, error) {
	digest, size, err := v1.SHA256(bytesReader(data))
	if err != nil {
		return v1.Hash{}, fmt.Errorf("failed to hash a blob: %w", err)
	}
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytesReader(data)), nil }
	// The digest was just computed from this very content.
	return digest, b.writeBlob(digest, size, open, true)
}

// writeBlob stores a blob unless the work directory already has it with the
// right digest. A blob is written to a temporary file, checked and then
// renamed, so an interruption never leaves a partial blob under its name.
// verified means that reading open's content to its end fails unless it has
// digest (a blob hashed in memory, or one go-containerregistry's remote
// package verifies as it is read); any other blob is hashed here.
func (b *builder) writeBlob(digest v1.Hash, size int64, open func() (io.ReadCloser, error), verified bool) error {
	if digest.Algorithm != "sha256" || !isHex(digest.Hex) || len(digest.Hex) != sha256.Size*2 {
		return fmt.Errorf("blob %s is not addressed by a sha256 digest", digest)
	}
	name := path.Join(ImagesDir, "blobs", "sha256", digest.Hex)
	b.result.ImageBytes += size
	if _, seen := b.blobs[digest.Hex]; seen {
		return nil
	}
	p := filepath.Join(b.dir, filepath.FromSlash(name))
	if got, err := sumFile(p); err == nil && got == digest.Hex {
		b.result.BytesReused += size
	} else {
		if err := fetchBlob(p, digest, open, verified); err != nil {
			return err
		}
		b.result.BytesFetched += size
	}
	b.blobs[digest.Hex] = size
	b.result.StoredBytes += size
	b.sums[name] = digest.Hex
	return nil
}

// fetchBlob copies a blob to p through a temporary file, checking its digest
// unless its reader is verified (see writeBlob).
func fetchBlob(p string, digest v1.Hash, open func() (io.ReadCloser, error), verified bool) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("failed to create the blob directory: %w", err)
	}
	rc, err := open()
	if err != nil {
		return fmt.Errorf("failed to read blob %s: %w", digest, err)
	}
	defer func() { _ = rc.Close() }()
	tmp, err := os.CreateTemp(filepath.Dir(p), digest.Hex+".partial-*")
	if err != nil {
		return fmt.Errorf("failed to create a temporary blob file: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	var h hash.Hash
	w := io.Writer(tmp)
	if !verified {
		h = sha256.New()
		w = io.MultiWriter(tmp, h)
	}
	_, err = io.Copy(w, rc)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("failed to download blob %s: %w", digest, err)
	}
	if h != nil {
		if got := hex.EncodeToString(h.Sum(nil)); got != digest.Hex {
			return fmt.Errorf("blob %s arrived with digest sha256:%s", digest, got)
		}
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("failed to store blob %s: %w", digest, err)
	}
	return nil
}
