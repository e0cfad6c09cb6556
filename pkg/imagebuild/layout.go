package imagebuild

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/filelimit"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/bundle"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
)

// Items returns the built images as the installer's mirror and bundle
// code takes them: each index under its reference, its SBOM and signature
// as referrers.
func Items(built []Built) []mirror.Item {
	items := make([]mirror.Item, 0, len(built))
	for _, b := range built {
		item := mirror.Item{Ref: b.Ref, Index: b.Index}
		for _, r := range b.Referrers {
			item.Referrers = append(item.Referrers, mirror.Item{Ref: r.Ref, Image: r.Image})
		}
		items = append(items, item)
	}
	return items
}

// WriteLayout replaces the OCI layout at dir with the built images, in the
// form bundle.LayoutImages reads: it writes a new layout beside dir and
// renames it into place, so dir is never half-written.
func WriteLayout(dir string, built []Built) error {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("failed to create %s: %w", parent, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+"-")
	if err != nil {
		return fmt.Errorf("failed to create a directory beside %s: %w", dir, err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	next := filepath.Join(tmp, "layout")
	if err := bundle.WriteLayout(next, Items(built)); err != nil {
		return err
	}
	old := filepath.Join(tmp, "old")
	if err := os.Rename(dir, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("failed to move the previous layout %s aside: %w", dir, err)
	}
	if err := os.Rename(next, dir); err != nil {
		return fmt.Errorf("failed to move the layout into %s: %w", dir, err)
	}
	return nil
}

// Push copies the built images with their referrers to where their
// references name, through the installer's mirror code (retries, blobs the
// registry has are not uploaded again).
func Push(ctx context.Context, built []Built, reg mirror.Registry, opts mirror.Options) error {
	return mirror.Copy(ctx, Items(built), reg, opts)
}

// Sizes describes the compressed size of each platform image of b.
func Sizes(b Built) (string, error) {
	m, err := b.Index.IndexManifest()
	if err != nil {
		return "", fmt.Errorf("failed to read the index of %s: %w", b.Ref, err)
	}
	var parts []string
	for _, d := range m.Manifests {
		img, err := b.Index.Image(d.Digest)
		if err != nil {
			return "", fmt.Errorf("failed to read %s of %s: %w", d.Platform, b.Ref, err)
		}
		size, err := compressedSize(img)
		if err != nil {
			return "", err
		}
		parts = append(parts, fmt.Sprintf("%s %s", d.Platform, filelimit.Bytes(size)))
	}
	return strings.Join(parts, ", "), nil
}

// compressedSize adds up the layers of img.
func compressedSize(img v1.Image) (int64, error) {
	layers, err := img.Layers()
	if err != nil {
		return 0, fmt.Errorf("failed to list the layers: %w", err)
	}
	var total int64
	for _, l := range layers {
		s, err := l.Size()
		if err != nil {
			return 0, fmt.Errorf("failed to size a layer: %w", err)
		}
		total += s
	}
	return total, nil
}
