package bundle

import (
	"fmt"
	"path/filepath"
	"sort"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
)

// Images returns the images of the OCI layout of a bundle extracted to dir,
// each under the upstream reference it was stored for, an index as Index,
// with its referrers attached.
func Images(dir string) ([]mirror.Item, error) {
	return LayoutImages(filepath.Join(dir, ImagesDir))
}

// WriteLayout writes items, sorted by reference, and their referrers as an
// OCI image layout in the bundle's form to dir, which must not exist:
// each entry of index.json names its reference, a referrer's also the
// reference of its subject. LayoutImages reads it back; make images
// writes its images so.
func WriteLayout(dir string, items []mirror.Item) error {
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("failed to create the image layout %s: %w", dir, err)
	}
	sorted := append([]mirror.Item(nil), items...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Ref < sorted[j].Ref })
	for _, item := range sorted {
		if err := appendItem(p, item, map[string]string{refAnnotation: item.Ref}); err != nil {
			return err
		}
		for _, r := range item.Referrers {
			if err := appendItem(p, r, map[string]string{refAnnotation: r.Ref, subjectAnnotation: item.Ref}); err != nil {
				return err
			}
		}
	}
	return nil
}

// appendItem writes one image or index and its index.json entry.
func appendItem(p layout.Path, item mirror.Item, annotations map[string]string) error {
	var err error
	if item.Index != nil {
		err = p.AppendIndex(item.Index, layout.WithAnnotations(annotations))
	} else {
		err = p.AppendImage(item.Image, layout.WithAnnotations(annotations))
	}
	if err != nil {
		return fmt.Errorf("failed to write %s into the image layout: %w", item.Ref, err)
	}
	return nil
}

// LayoutImages returns the images of an OCI layout that WriteLayout or a
// bundle wrote, each under its reference, with its referrers attached.
func LayoutImages(dir string) ([]mirror.Item, error) {
	p, err := layout.FromPath(dir)
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
