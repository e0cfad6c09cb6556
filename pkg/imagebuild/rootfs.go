package imagebuild

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// Paths and identities inside every image.
const (
	// BinDir holds the binaries.
	BinDir = "usr/local/bin"
	// CertFile holds the trusted CA certificates, where Go and most
	// programs look first on Linux.
	CertFile = "etc/ssl/certs/ca-certificates.crt"
	// Nobody is the uid and gid the images run as.
	Nobody = 65534
)

// passwd and group name root and nobody, so that tools that look up the
// user (and Go's os/user) find the image's user.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n"
	group  = "root:x:0:\nnobody:x:65534:\n"
	// nsswitch makes Go's resolver read /etc/hosts before DNS.
	nsswitch = "hosts: files dns\n"
)

// entry is one file, directory or hard link of a layer.
type entry struct {
	name string
	mode int64
	// data is a file's content, or open reads it.
	data []byte
	open func() (io.ReadCloser, error)
	size int64
	// link is the target of a hard link.
	link string
	dir  bool
}

// baseEntries are the files every image has: the CA certificates and the
// user database.
func baseEntries() []entry {
	certs := caCertificates()
	return []entry{
		{name: CertFile, mode: 0o644, data: certs},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/nsswitch.conf", mode: 0o644, data: []byte(nsswitch)},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
	}
}

// caCertificates returns the Mozilla (NSS) roots of the pinned
// golang.org/x/crypto/x509roots/fallback module as PEM. Roots with a
// constraint that X.509 cannot express (distrust after a date) are left
// out: a PEM file would trust them without it.
func caCertificates() []byte {
	var b bytes.Buffer
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate})
	}
	return b.Bytes()
}

// binaryEntries puts the binary at file into BinDir under names[0], the
// other names as hard links to it.
func binaryEntries(file string, names []string) ([]entry, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, fmt.Errorf("failed to read binary: %w", err)
	}
	first := path.Join(BinDir, names[0])
	out := []entry{{name: first, mode: 0o755, size: st.Size(), open: func() (io.ReadCloser, error) { return os.Open(file) }}}
	for _, n := range names[1:] {
		out = append(out, entry{name: path.Join(BinDir, n), mode: 0o755, link: first})
	}
	return out, nil
}

// layer writes entries, with the directories above them, as a gzip tar
// layer: entries sorted by name, every time set to created, owned by root
// by number only, the gzip header empty. Equal entries give equal bytes.
func layer(entries []entry, created time.Time) (v1.Layer, error) {
	all := withDirs(entries)
	var raw bytes.Buffer
	gz, err := gzip.NewWriterLevel(&raw, gzip.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("failed to compress a layer: %w", err)
	}
	tw := tar.NewWriter(gz)
	for _, e := range all {
		if err := writeEntry(tw, e, created); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("failed to write a layer: %w", err)
	}
	if err := gz.Close(); err != nil {
		return nil, fmt.Errorf("failed to compress a layer: %w", err)
	}
	data := raw.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
}

// withDirs returns entries and every directory above them, sorted by name.
func withDirs(entries []entry) []entry {
	seen := map[string]bool{}
	all := append([]entry(nil), entries...)
	for _, e := range entries {
		seen[e.name] = true
	}
	for _, e := range entries {
		for d := path.Dir(e.name); d != "." && !seen[d]; d = path.Dir(d) {
			seen[d] = true
			all = append(all, entry{name: d, mode: 0o755, dir: true})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].name < all[j].name })
	return all
}

// writeEntry writes one entry with fixed metadata.
func writeEntry(tw *tar.Writer, e entry, created time.Time) error {
	hdr := &tar.Header{Name: e.name, Mode: e.mode, ModTime: created.UTC().Truncate(time.Second), Format: tar.FormatUSTAR}
	switch {
	case e.dir:
		hdr.Typeflag, hdr.Name = tar.TypeDir, e.name+"/"
	case e.link != "":
		hdr.Typeflag, hdr.Linkname = tar.TypeLink, e.link
	default:
		hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(e.data))
		if e.open != nil {
			hdr.Size = e.size
		}
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("failed to write %s into a layer: %w", e.name, err)
	}
	if hdr.Typeflag != tar.TypeReg {
		return nil
	}
	if e.open == nil {
		_, err := tw.Write(e.data)
		return wrapWrite(e.name, err)
	}
	rc, err := e.open()
	if err != nil {
		return fmt.Errorf("failed to read %s: %w", e.name, err)
	}
	defer func() { _ = rc.Close() }()
	_, err = io.Copy(tw, rc)
	return wrapWrite(e.name, err)
}

func wrapWrite(name string, err error) error {
	if err != nil {
		return fmt.Errorf("failed to write %s into a layer: %w", strings.TrimSuffix(name, "/"), err)
	}
	return nil
}
