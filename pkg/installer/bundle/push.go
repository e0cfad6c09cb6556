package bundle

import (
	"fmt"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
)

// Images returns the images of the OCI layout of a bundle extracted to dir,
// each under the upstream reference it was stored for.
func Images(dir string) ([]mirror.Item, error) {
	p, err := layout.FromPath(filepath.Join(dir, ImagesDir))
	if err != nil {
		return nil, fmt.Errorf("failed to open the image layout: %w", err)
	}
	index, err := p.ImageIndex()
	if err != nil {
		return nil, fmt.Errorf("failed to read the image index: %w", err)
	}
	manifest, err := index.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("failed to read the image index: %w", err)
	}
	items := make([]mirror.Item, 0, len(manifest.Manifests))
	for _, desc := range manifest.Manifests {
		ref := desc.Annotations[refAnnotation]
		if ref == "" {
			return nil, fmt.Errorf("image %s in the index has no %s annotation", desc.Digest, refAnnotation)
		}
		img, err := index.Image(desc.Digest)
		if err != nil {
			return nil, fmt.Errorf("failed to read image %s: %w", ref, err)
		}
		items = append(items, mirror.Item{Ref: ref, Image: img})
	}
	return items, nil
}
