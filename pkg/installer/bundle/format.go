package bundle

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
)

// Paths inside a bundle.
const (
	// ChecksumsFile lists the sha256 of every other file.
	ChecksumsFile = "checksums.txt"
	// MetadataFile holds the bundle's Metadata as JSON.
	MetadataFile = "bundle.json"
	// ChartsDir holds one directory per chart.
	ChartsDir = "charts"
	// ImagesDir is the OCI image layout.
	ImagesDir = "images"
	// SignatureFile is the signature of checksums.txt, in base64, as cosign
	// sign-blob writes it. It is the second entry of a signed bundle and the
	// only file checksums.txt does not list.
	SignatureFile = ChecksumsFile + ".sig"
	// SBOMFile is the bundle's CycloneDX SBOM, in JSON.
	SBOMFile = "sbom.cdx.json"
)

// Compression is how a bundle file is compressed.
type Compression string

// Compressions of a bundle file. Reading detects them by their magic
// numbers.
const (
	CompressionNone Compression = "none"
	CompressionGzip Compression = "gzip"
	CompressionZstd Compression = "zstd"
)

// CompressionFor returns the compression a file name implies: zstd for
// .zst, gzip for .gz and .tgz, none otherwise.
func CompressionFor(file string) Compression {
	switch {
	case strings.HasSuffix(file, ".zst"):
		return CompressionZstd
	case strings.HasSuffix(file, ".gz"), strings.HasSuffix(file, ".tgz"):
		return CompressionGzip
	default:
		return CompressionNone
	}
}

// ParseCompression parses a compression name.
func ParseCompression(s string) (Compression, error) {
	switch c := Compression(s); c {
	case CompressionNone, CompressionGzip, CompressionZstd:
		return c, nil
	default:
		return "", fmt.Errorf("unknown compression %q (want none, gzip or zstd)", s)
	}
}

// FormatVersion is the version of the bundle format this package writes and
// reads. Version 2 stores image indexes and referrers and records
// platforms per image.
const FormatVersion = 2

// Metadata describes a bundle's content.
type Metadata struct {
	// FormatVersion is the bundle format's version.
	FormatVersion int `json:"formatVersion"`
	// Platforms are the platforms chosen at creation, as
	// os/architecture[/variant].
	Platforms []string `json:"platforms"`
	// Images are the stored images, sorted by reference.
	Images []ImageEntry `json:"images"`
	// Charts are the stored charts, subcharts included, sorted by path.
	Charts []ChartEntry `json:"charts,omitempty"`
}

// ChartEntry is one stored chart.
type ChartEntry struct {
	// Path is the chart's directory in the bundle.
	Path string `json:"path"`
	// Name and Version are the chart's, from its Chart.yaml.
	Name    string `json:"name"`
	Version string `json:"version"`
	// AppVersion is the version of what the chart deploys, if it says.
	AppVersion string `json:"appVersion,omitempty"`
}

// ImageEntry is one stored image.
type ImageEntry struct {
	// Ref is the image's upstream reference.
	Ref string `json:"ref"`
	// Digest is the digest of the stored image manifest or index.
	Digest string `json:"digest"`
	// MediaType is the media type of the stored manifest or index.
	MediaType string `json:"mediaType,omitempty"`
	// Platforms are the stored platforms, os/architecture[/variant]: those
	// of the manifests an index lists, or the one of an image's config.
	Platforms []string `json:"platforms,omitempty"`
	// UpstreamDigest is the digest of the upstream index when the bundle
	// holds a filtered copy of it, which has a digest of its own; empty
	// when the stored manifest is the upstream one.
	UpstreamDigest string `json:"upstreamDigest,omitempty"`
	// Referrers are the stored manifests attached to the image.
	Referrers []ReferrerEntry `json:"referrers,omitempty"`
}

// ReferrerEntry is one stored signature, attestation or SBOM of an image.
type ReferrerEntry struct {
	// Ref is its upstream reference: a cosign tag
	// (REPOSITORY:sha256-<hex>.sig) or, for an OCI referrer, a digest.
	Ref string `json:"ref"`
	// Digest is the digest of its manifest.
	Digest string `json:"digest"`
	// MediaType is the media type of its manifest.
	MediaType string `json:"mediaType,omitempty"`
}

// Refs returns the references of the stored images.
func (m Metadata) Refs() []string {
	refs := make([]string, 0, len(m.Images))
	for _, img := range m.Images {
		refs = append(refs, img.Ref)
	}
	return refs
}

// checksums maps a bundle path to its hex sha256.
type checksums map[string]string

// encode renders c as checksums.txt: "<hex>  <path>" lines sorted by path.
func (c checksums) encode() []byte {
	paths := make([]string, 0, len(c))
	for p := range c {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b bytes.Buffer
	for _, p := range paths {
		fmt.Fprintf(&b, "%s  %s\n", c[p], p)
	}
	return b.Bytes()
}

// parseChecksums parses checksums.txt, refusing malformed lines, unsafe paths
// and paths listed twice.
func parseChecksums(r io.Reader) (checksums, error) {
	c := checksums{}
	s := bufio.NewScanner(r)
	for line := 1; s.Scan(); line++ {
		sum, p, ok := strings.Cut(s.Text(), "  ")
		if !ok || len(sum) != sha256.Size*2 || !isHex(sum) {
			return nil, fmt.Errorf("%s line %d is not \"<sha256>  <path>\"", ChecksumsFile, line)
		}
		if !safePath(p) || p == ChecksumsFile {
			return nil, fmt.Errorf("%s line %d names an invalid path %q", ChecksumsFile, line, p)
		}
		if _, dup := c[p]; dup {
			return nil, fmt.Errorf("%s lists %s twice", ChecksumsFile, p)
		}
		c[p] = sum
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", ChecksumsFile, err)
	}
	return c, nil
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// safePath reports whether p is a clean, relative, slash-separated path that
// stays inside the bundle.
func safePath(p string) bool {
	return p != "" && p != "." && path.Clean(p) == p && !path.IsAbs(p) && !strings.HasPrefix(p, "../") && p != ".." &&
		!strings.ContainsAny(p, "\\\x00\n")
}

// sumBytes returns the hex sha256 of data.
func sumBytes(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
