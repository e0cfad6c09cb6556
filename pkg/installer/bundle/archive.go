package bundle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/klauspost/compress/zstd"
)

// writeTar writes the bundle file: checksums.txt first, its signature when
// sig is set, then the metadata, then every other recorded file sorted by
// path. Headers carry no owner or time, so equal content gives an equal
// bundle. The file appears under its name only once complete.
func (b *builder) writeTar(output string, list, sig []byte, compression Compression) (err error) {
	out, err := createOutput(output, compression)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			out.abort()
		}
	}()
	if err := writeHead(out.tw, list, sig); err != nil {
		return err
	}
	for _, name := range b.entryOrder() {
		if err := b.copyEntry(out, name); err != nil {
			return err
		}
	}
	return out.commit()
}

// writeHead writes checksums.txt and, when sig is set, checksums.txt.sig.
func writeHead(tw *tar.Writer, list, sig []byte) error {
	if err := writeEntry(tw, ChecksumsFile, int64(len(list)), bytes.NewReader(list)); err != nil {
		return err
	}
	if sig == nil {
		return nil
	}
	return writeEntry(tw, SignatureFile, int64(len(sig)), bytes.NewReader(sig))
}

// output is a bundle file being written: a temporary file beside its final
// name, renamed to it by commit.
type output struct {
	name string
	tmp  *os.File
	buf  *bufio.Writer
	w    io.WriteCloser
	tw   *tar.Writer
	// plain tells that the archive is not compressed, so file content can
	// be copied into it by the kernel.
	plain bool
}

// createOutput starts writing the bundle file name with compression.
func createOutput(name string, compression Compression) (*output, error) {
	tmp, err := os.CreateTemp(filepath.Dir(name), filepath.Base(name)+".partial-*")
	if err != nil {
		return nil, fmt.Errorf("failed to create the bundle file: %w", err)
	}
	buf := bufio.NewWriterSize(tmp, 1<<20)
	w, err := compressor(buf, compression)
	if err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return nil, err
	}
	plain := compression == "" || compression == CompressionNone
	return &output{name: name, tmp: tmp, buf: buf, w: w, tw: tar.NewWriter(w), plain: plain}, nil
}

// commit finishes the archive and moves it to its name.
func (o *output) commit() error {
	if err := o.tw.Close(); err != nil {
		return fmt.Errorf("failed to finish the bundle: %w", err)
	}
	if err := o.w.Close(); err != nil {
		return fmt.Errorf("failed to finish the bundle compression: %w", err)
	}
	if err := o.buf.Flush(); err != nil {
		return fmt.Errorf("failed to write the bundle: %w", err)
	}
	if err := o.tmp.Close(); err != nil {
		return fmt.Errorf("failed to write the bundle: %w", err)
	}
	if err := os.Rename(o.tmp.Name(), o.name); err != nil {
		return fmt.Errorf("failed to move the bundle to %s: %w", o.name, err)
	}
	return nil
}

// abort removes the unfinished file.
func (o *output) abort() {
	_ = o.tmp.Close()
	_ = os.Remove(o.tmp.Name())
}

// nopWriteCloser is an uncompressed stream.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// compressor wraps w in the compression c.
func compressor(w io.Writer, c Compression) (io.WriteCloser, error) {
	switch c {
	case "", CompressionNone:
		return nopWriteCloser{w}, nil
	case CompressionGzip:
		return gzip.NewWriter(w), nil
	case CompressionZstd:
		zw, err := zstd.NewWriter(w)
		if err != nil {
			return nil, fmt.Errorf("failed to start zstd compression: %w", err)
		}
		return zw, nil
	default:
		return nil, fmt.Errorf("unknown compression %q", c)
	}
}

// entryOrder is the metadata followed by every other file, sorted.
func (b *builder) entryOrder() []string {
	names := make([]string, 0, len(b.sums))
	for name := range b.sums {
		if name != MetadataFile {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return append([]string{MetadataFile}, names...)
}

// copyEntry copies one file of the work directory into the tar.
func (b *builder) copyEntry(out *output, name string) error {
	f, err := os.Open(filepath.Join(b.dir, filepath.FromSlash(name)))
	if err != nil {
		return fmt.Errorf("failed to open %s: %w", name, err)
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("failed to stat %s: %w", name, err)
	}
	if !out.plain {
		return writeEntry(out.tw, name, st.Size(), f)
	}
	if err := out.copyFile(name, st.Size(), f); err != nil {
		return fmt.Errorf("failed to add %s to the bundle: %w", name, err)
	}
	return nil
}

// copyFile adds an entry of size bytes from f to an uncompressed archive,
// letting the kernel copy the content (copy_file_range) instead of passing
// it through this process. The tar stream stays what writeEntry would write:
// the same header, the content, and zeros up to the next 512-byte block.
func (o *output) copyFile(name string, size int64, f *os.File) error {
	var head bytes.Buffer
	if err := tar.NewWriter(&head).WriteHeader(entryHeader(name, size)); err != nil {
		return err
	}
	// Finish the previous entry's padding, then hand the file position to
	// the kernel copy with everything before it written.
	if err := o.tw.Flush(); err != nil {
		return err
	}
	if _, err := o.buf.Write(head.Bytes()); err != nil {
		return err
	}
	if err := o.buf.Flush(); err != nil {
		return err
	}
	n, err := o.tmp.ReadFrom(io.LimitReader(f, size))
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("read %d of its %d bytes", n, size)
	}
	_, err = o.buf.Write(make([]byte, (blockSize-size%blockSize)%blockSize))
	return err
}

// blockSize is the tar block size.
const blockSize = 512

// entryHeader is the header of a regular file of the bundle. It carries no
// owner or time, so equal content gives an equal bundle.
func entryHeader(name string, size int64) *tar.Header {
	return &tar.Header{
		Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644,
		ModTime: time.Unix(0, 0).UTC(), Format: tar.FormatPAX,
	}
}

func writeEntry(tw *tar.Writer, name string, size int64, r io.Reader) error {
	if err := tw.WriteHeader(entryHeader(name, size)); err != nil {
		return fmt.Errorf("failed to add %s to the bundle: %w", name, err)
	}
	if _, err := io.Copy(tw, r); err != nil {
		return fmt.Errorf("failed to add %s to the bundle: %w", name, err)
	}
	return nil
}

// sumFile returns the hex sha256 of the file at p.
func sumFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func bytesReader(data []byte) *bytes.Reader { return bytes.NewReader(data) }
