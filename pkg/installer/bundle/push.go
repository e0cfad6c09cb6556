package bundle

import (
	"fmt"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
)

// Images returns the images of the OCI layout of a bundle extracted to dir,
// each under the upstream reference it was stored for, an index as Index,
// with its referrers attached.
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
	var items []mirror.Item
	at := map[string]int{}
	var referrers []v1.Descriptor
	for _, desc := range manifest.Manifests {
		if desc.Annotations[subjectAnnotation] != "" {
			referrers = append(referrers, desc)
			continue
		}
		item, err := layoutItem(index, desc)
		if err != nil {
			return nil, err
		}
		at[item.Ref] = len(items)
		items = append(items, item)
	}
	for _, desc := range referrers {
		subject := desc.Annotations[subjectAnnotation]
		i, ok := at[subject]
		if !ok {
			return nil, fmt.Errorf("referrer %s in the index is attached to %s, which the bundle does not hold", desc.Digest, subject)
		}
		item, err := layoutItem(index, desc)
		if err != nil {
			return nil, err
		}
		items[i].Referrers = append(items[i].Referrers, item)
	}
	return items, nil
}

// layoutItem reads the image or index of one entry of the layout's index.
func layoutItem(index v1.ImageIndex, desc v1.Descriptor) (mirror.Item, error) {
	ref := desc.Annotations[refAnnotation]
	if ref == "" {
		return mirror.Item{}, fmt.Errorf("image %s in the index has no %s annotation", desc.Digest, refAnnotation)
	}
	item := mirror.Item{Ref: ref}
	var err error
	if desc.MediaType.IsIndex() {
		item.Index, err = index.ImageIndex(desc.Digest)
	} else {
		item.Image, err = index.Image(desc.Digest)
	}
	if err != nil {
		return mirror.Item{}, fmt.Errorf("failed to read image %s: %w", ref, err)
	}
	return item, nil
}
