package bundle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/filelimit"
)

// maxChecksumsSize bounds checksums.txt, which is held in memory.
const maxChecksumsSize = 16 << 20

// Verified is what a verified bundle holds.
type Verified struct {
	// Metadata is the bundle's metadata.
	Metadata Metadata
	// Checksum is the aggregate checksum: the sha256 of checksums.txt.
	Checksum string
	// Files is the number of files, checksums.txt included and
	// checksums.txt.sig left out.
	Files int
	// Signed tells that the bundle holds a signature; SignatureChecked that
	// it was verified with the key of ReadOptions.
	Signed, SignatureChecked bool
	// SBOM is the content of sbom.cdx.json; nil for a bundle that has none.
	SBOM []byte
}

// ReadOptions are the inputs of Read.
type ReadOptions struct {
	// Dir is where the files Want accepts are written; empty writes none.
	Dir string
	// Want selects the files to write under Dir; nil selects every file.
	Want func(name string) bool
	// Key checks the signature of checksums.txt before any other file is
	// read; a bundle without a signature is then refused too. Nil checks
	// no signature.
	Key signature.Verifier
}

// TamperedError reports files of a bundle that do not match its
// checksums.txt.
type TamperedError struct {
	// Changed are files whose content differs from their checksum.
	Changed []string
	// Missing are listed files the bundle does not hold.
	Missing []string
	// Extra are entries the list does not name, or names seen twice.
	Extra []string
	// NotRegular are entries that are no regular file (links, FIFOs,
	// devices, directories), each with its kind, listed or not.
	NotRegular []string
}

// Error names every offending file.
func (e *TamperedError) Error() string {
	var parts []string
	for _, p := range []struct {
		what  string
		files []string
	}{{"changed", e.Changed}, {"missing", e.Missing}, {"not listed in " + ChecksumsFile, e.Extra}, {"not regular files", e.NotRegular}} {
		if len(p.files) > 0 {
			parts = append(parts, p.what+": "+strings.Join(p.files, ", "))
		}
	}
	return "the bundle does not match its checksums (" + strings.Join(parts, "; ") + ")"
}

func (e *TamperedError) empty() bool {
	return len(e.Changed) == 0 && len(e.Missing) == 0 && len(e.Extra) == 0 && len(e.NotRegular) == 0
}

// Verify reads the bundle at file in one pass and checks every file against
// checksums.txt.
func Verify(file string) (*Verified, error) {
	return Read(file, ReadOptions{})
}

// Extract verifies the bundle at file like Verify and writes the files that
// want accepts under dir. On error, what was written under dir must not be
// used.
func Extract(file, dir string, want func(name string) bool) (*Verified, error) {
	return Read(file, ReadOptions{Dir: dir, Want: want})
}

// Read verifies the bundle at file in one pass: its signature first when
// opts.Key is set, then every file against checksums.txt, writing the files
// opts.Want accepts under opts.Dir. On error, what was written under
// opts.Dir must not be used.
func Read(file string, opts ReadOptions) (*Verified, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("failed to open bundle: %w", err)
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("failed to stat bundle %s: %w", file, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("bundle %s is a directory, not a bundle file: a bundle is one tar archive "+
			"(optionally zstd- or gzip-compressed), as `kubevirt-installer bundle create -o FILE` writes it", file)
	}
	r, _, err := decompress(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("failed to read bundle %s: %w", file, err)
	}
	defer func() { _ = r.Close() }()
	v, err := walk(tar.NewReader(r), opts, nil)
	if err != nil {
		return nil, fmt.Errorf("bundle %s is refused: %w", file, err)
	}
	return v, nil
}

// decompress detects gzip and zstd by their magic numbers.
func decompress(r *bufio.Reader) (io.ReadCloser, Compression, error) {
	magic, _ := r.Peek(4)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		gz, err := gzip.NewReader(r)
		if err != nil {
			return nil, "", fmt.Errorf("failed to open the gzip stream: %w", err)
		}
		return gz, CompressionGzip, nil
	case bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(r)
		if err != nil {
			return nil, "", fmt.Errorf("failed to open the zstd stream: %w", err)
		}
		return zr.IOReadCloser(), CompressionZstd, nil
	default:
		return io.NopCloser(r), CompressionNone, nil
	}
}

// walk checks every tar entry against the list that opens the archive.
// When cp is set, every entry but the signature is also written to it,
// after the list and the signature sign gives.
func walk(tr *tar.Reader, opts ReadOptions, cp *copier) (*Verified, error) {
	list, err := readList(tr)
	if err != nil {
		return nil, err
	}
	sums, err := parseChecksums(bytes.NewReader(list))
	if err != nil {
		return nil, err
	}
	sig, hdr, err := readSignature(tr)
	if err != nil {
		return nil, err
	}
	if err := checkSignature(opts.Key, list, sig); err != nil {
		return nil, err
	}
	if err := cp.head(list); err != nil {
		return nil, err
	}
	c := &checker{sums: sums, seen: map[string]bool{}, irregular: map[string]bool{}, bad: &TamperedError{}, dir: opts.Dir, want: opts.Want,
		kept: map[string][]byte{}, blobs: map[string][]byte{}}
	for ; hdr != nil; hdr, err = next(tr) {
		if err := c.visit(tr, hdr, cp); err != nil {
			return nil, err
		}
	}
	if err != nil {
		return nil, fmt.Errorf("failed to read the archive after %d files: %w", len(c.seen), err)
	}
	for name := range sums {
		if !c.seen[name] && !c.irregular[name] {
			c.bad.Missing = append(c.bad.Missing, name)
		}
	}
	if !c.bad.empty() {
		sort.Strings(c.bad.Missing)
		return nil, c.bad
	}
	v, err := finish(list, c.kept[MetadataFile], len(c.seen)+1)
	if err != nil {
		return nil, err
	}
	if err := checkPlatforms(v.Metadata, c.blobs); err != nil {
		return nil, err
	}
	v.Signed, v.SignatureChecked, v.SBOM = sig != nil, opts.Key != nil, c.kept[SBOMFile]
	return v, nil
}

// readList reads checksums.txt, which must be the first entry.
func readList(tr *tar.Reader) ([]byte, error) {
	hdr, err := tr.Next()
	if err != nil {
		return nil, fmt.Errorf("failed to read it as a tar archive, which a bundle is: %w", err)
	}
	switch {
	case hdr.Name != ChecksumsFile:
		return nil, fmt.Errorf("the first entry is not %s", ChecksumsFile)
	case hdr.Typeflag != tar.TypeReg:
		return nil, fmt.Errorf("%s is a %s, not a regular file", ChecksumsFile, entryKind(hdr))
	case hdr.Size > maxChecksumsSize:
		return nil, tooLarge(hdr)
	}
	list, err := io.ReadAll(tr)
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", ChecksumsFile, err)
	}
	return list, nil
}

// readSignature reads checksums.txt.sig when it is the second entry, as
// only there it is taken, and returns the entry after it. The signature is
// nil when the bundle is unsigned; the header is nil at the archive's end.
func readSignature(tr *tar.Reader) ([]byte, *tar.Header, error) {
	hdr, err := next(tr)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to read the entry after %s: %w", ChecksumsFile, err)
	}
	if hdr == nil || hdr.Name != SignatureFile || hdr.Typeflag != tar.TypeReg {
		return nil, hdr, nil
	}
	if hdr.Size > maxSignatureSize {
		return nil, nil, fmt.Errorf("%s is %d bytes, more than a signature's %d", SignatureFile, hdr.Size, maxSignatureSize)
	}
	sig, err := io.ReadAll(tr)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to read %s: %w", SignatureFile, err)
	}
	hdr, err = next(tr)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to read the entry after %s: %w", SignatureFile, err)
	}
	return sig, hdr, nil
}

// next returns the next tar header, or nil at the archive's end.
func next(tr *tar.Reader) (*tar.Header, error) {
	hdr, err := tr.Next()
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	return hdr, err
}

// checker compares tar entries with the checksum list.
type checker struct {
	sums checksums
	seen map[string]bool
	// irregular are the names of entries that are no regular file.
	irregular map[string]bool
	bad       *TamperedError
	dir       string
	want      func(string) bool
	// kept holds the content of the metadata and the SBOM.
	kept map[string][]byte
	// blobs holds the JSON blobs of the layout up to maxManifestSize by
	// hex digest: manifests, indexes and configs, to check platforms with.
	blobs map[string][]byte
}

// check hashes one entry, extracting it when wanted, and records a
// mismatch.
func (c *checker) check(r io.Reader, hdr *tar.Header) error {
	if hdr.Typeflag != tar.TypeReg {
		c.irregular[hdr.Name] = true
		c.bad.NotRegular = append(c.bad.NotRegular, fmt.Sprintf("%s (%s)", hdr.Name, entryKind(hdr)))
		return nil
	}
	expected, ok := c.sums[hdr.Name]
	if !ok || c.seen[hdr.Name] {
		c.bad.Extra = append(c.bad.Extra, hdr.Name)
		return nil
	}
	c.seen[hdr.Name] = true
	target := ""
	if c.dir != "" && (c.want == nil || c.want(hdr.Name)) {
		target = filepath.Join(c.dir, filepath.FromSlash(hdr.Name))
	}
	blob := strings.HasPrefix(hdr.Name, blobsDir) && hdr.Size <= maxManifestSize
	var keep *keeper
	switch {
	case blob:
		keep = &keeper{jsonOnly: true, size: hdr.Size}
	case hdr.Name == MetadataFile || hdr.Name == SBOMFile:
		if hdr.Size > maxChecksumsSize {
			return tooLarge(hdr)
		}
		keep = &keeper{size: hdr.Size}
	}
	got, err := consume(r, target, keep)
	if err != nil {
		return fmt.Errorf("failed to read %s: %w", hdr.Name, err)
	}
	if got != expected {
		c.bad.Changed = append(c.bad.Changed, hdr.Name)
	}
	switch {
	case blob && keep.data != nil:
		c.blobs[strings.TrimPrefix(hdr.Name, blobsDir)] = keep.data
	case keep != nil && !blob:
		c.kept[hdr.Name] = keep.data
	}
	return nil
}

// tooLarge refuses a file that is read into memory and is larger than
// the bound of such files. Its content is not read: it would be held
// only up to the bound and then differ from its checksum.
func tooLarge(hdr *tar.Header) error {
	return fmt.Errorf("%s is too large: %s, more than the %s limit of a file the installer reads into memory",
		hdr.Name, filelimit.Bytes(hdr.Size), filelimit.Bytes(maxChecksumsSize))
}

// entryKind names the kind of a tar entry.
func entryKind(hdr *tar.Header) string {
	switch hdr.Typeflag {
	case tar.TypeSymlink:
		return "symbolic link"
	case tar.TypeLink:
		return "hard link"
	case tar.TypeFifo:
		return "named pipe (FIFO)"
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeDir:
		return "directory"
	case tar.TypeReg:
		return "regular file"
	default:
		return fmt.Sprintf("tar entry of type %q", hdr.Typeflag)
	}
}

// blobsDir is the directory of the layout's sha256 blobs, with a slash.
const blobsDir = ImagesDir + "/blobs/sha256/"

// keeper holds the content written to it. With jsonOnly it holds only
// content that starts with '{' (a manifest, an index or a config), so the
// layers that share their size bound are hashed without being held.
type keeper struct {
	jsonOnly bool
	// size is the entry's size from its header, the capacity to reserve.
	size          int64
	started, drop bool
	data          []byte
}

func (k *keeper) Write(p []byte) (int, error) {
	if !k.started && len(p) > 0 {
		k.started = true
		k.drop = k.jsonOnly && p[0] != '{'
		if !k.drop {
			k.data = make([]byte, 0, min(k.size, maxChecksumsSize))
		}
	}
	if !k.drop {
		k.data = append(k.data, p...)
	}
	return len(p), nil
}

// consume hashes one entry, writing it to target unless target is empty and
// to keep unless keep is nil; what keep holds is bounded by
// maxChecksumsSize.
func consume(r io.Reader, target string, keep *keeper) (string, error) {
	h := sha256.New()
	writers := []io.Writer{h}
	if keep != nil {
		writers = append(writers, keep)
		r = io.LimitReader(r, maxChecksumsSize)
	}
	var out *os.File
	if target != "" {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return "", err
		}
		var err error
		if out, err = os.Create(target); err != nil {
			return "", err
		}
		writers = append(writers, out)
	}
	_, err := io.Copy(io.MultiWriter(writers...), r)
	if out != nil {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// finish decodes the metadata of a bundle whose files all matched.
func finish(list, metadata []byte, files int) (*Verified, error) {
	if metadata == nil {
		return nil, fmt.Errorf("the bundle has no %s", MetadataFile)
	}
	v := &Verified{Checksum: "sha256:" + sumBytes(list), Files: files}
	m, err := decodeMetadata(metadata)
	if err != nil {
		return nil, err
	}
	v.Metadata = m
	return v, nil
}
