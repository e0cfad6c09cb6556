package bundle

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"sort"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/filelimit"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
)

// Annotations of the entries of the layout's index.json.
const (
	// refAnnotation names an entry's upstream reference.
	refAnnotation = "org.opencontainers.image.ref.name"
	// subjectAnnotation marks a referrer entry with the reference of the
	// image it is attached to.
	subjectAnnotation = "io.kkp-kubevirt.bundle.subject"
)

// writeImages stores every image and its referrers in the OCI layout and
// writes its index.
func (b *builder) writeImages(ctx context.Context, items []mirror.Item, platforms []v1.Platform) (*Metadata, error) {
	if err := b.writeFile(path.Join(ImagesDir, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`+"\n")); err != nil {
		return nil, err
	}
	index := v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex}
	meta := &Metadata{FormatVersion: FormatVersion}
	sorted := append([]mirror.Item(nil), items...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Ref < sorted[j].Ref })
	for i, item := range sorted {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("failed to store the images: %w", err)
		}
		entry, descs, err := b.writeItem(item, platforms)
		if err != nil {
			return nil, fmt.Errorf("failed to store %s: %w", item.Ref, err)
		}
		index.Manifests = append(index.Manifests, descs...)
		meta.Images = append(meta.Images, entry)
		fmt.Fprintf(b.progress, "image %d/%d %s: %s fetched, %s reused\n", i+1, len(sorted), item.Ref,
			filelimit.Bytes(b.result.BytesFetched), filelimit.Bytes(b.result.BytesReused))
	}
	data, err := json.MarshalIndent(index, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("failed to encode the image index: %w", err)
	}
	return meta, b.writeFile(path.Join(ImagesDir, "index.json"), append(data, '\n'))
}

// writeItem stores one image, the chosen platforms of an index, and its
// referrers, and returns its metadata and its index.json entries.
func (b *builder) writeItem(item mirror.Item, platforms []v1.Platform) (ImageEntry, []v1.Descriptor, error) {
	entry := ImageEntry{Ref: item.Ref}
	stored := item
	if item.Index != nil {
		sel, err := selectPlatforms(item.Ref, item.Index, platforms)
		if err == nil && sel.filtered && isDigestRef(item.Ref) {
			// A reference by digest names this very index (and a
			// signature signs it): it is stored whole.
			sel, err = selectPlatforms(item.Ref, item.Index, indexPlatforms(item.Index))
		}
		if err != nil {
			return entry, nil, err
		}
		stored.Index, entry.Platforms = sel.index, sel.platforms
		if sel.filtered {
			upstream, err := item.Index.Digest()
			if err != nil {
				return entry, nil, fmt.Errorf("failed to hash the upstream index: %w", err)
			}
			entry.UpstreamDigest = upstream.String()
		}
	} else {
		var err error
		if entry.Platforms, err = checkImagePlatform(item.Ref, item.Image, platforms); err != nil {
			return entry, nil, err
		}
	}
	desc, err := b.writeManifest(stored)
	if err != nil {
		return entry, nil, err
	}
	entry.Digest, entry.MediaType = desc.Digest.String(), string(desc.MediaType)
	desc.Annotations = map[string]string{refAnnotation: item.Ref}
	descs := []v1.Descriptor{desc}
	for _, r := range item.Referrers {
		rdesc, err := b.writeManifest(r)
		if err != nil {
			return entry, nil, fmt.Errorf("failed to store referrer %s: %w", r.Ref, err)
		}
		rdesc.Annotations = map[string]string{refAnnotation: r.Ref, subjectAnnotation: item.Ref}
		descs = append(descs, rdesc)
		entry.Referrers = append(entry.Referrers, ReferrerEntry{Ref: r.Ref, Digest: rdesc.Digest.String(), MediaType: string(rdesc.MediaType)})
	}
	return entry, descs, nil
}

// writeManifest stores an image, or an index with every manifest it lists,
// and returns its descriptor.
func (b *builder) writeManifest(item mirror.Item) (v1.Descriptor, error) {
	if item.Index == nil {
		return b.writeImage(item.Image, item.FromRegistry)
	}
	manifest, err := item.Index.IndexManifest()
	if err != nil {
		return v1.Descriptor{}, fmt.Errorf("failed to read the index: %w", err)
	}
	for _, d := range manifest.Manifests {
		child, ok, err := mirror.IndexEntry(item.Index, d)
		if !ok {
			return v1.Descriptor{}, fmt.Errorf("index entry %s has media type %s, which is neither an image nor an index", d.Digest, d.MediaType)
		}
		if err != nil {
			return v1.Descriptor{}, fmt.Errorf("failed to read index entry %s: %w", d.Digest, err)
		}
		child.FromRegistry = item.FromRegistry
		if _, err := b.writeManifest(child); err != nil {
			return v1.Descriptor{}, fmt.Errorf("failed to store index entry %s: %w", d.Digest, err)
		}
	}
	raw, err := item.Index.RawManifest()
	if err != nil {
		return v1.Descriptor{}, fmt.Errorf("failed to read the index: %w", err)
	}
	return b.writeRawManifest(raw, manifest.MediaType)
}

// writeImage stores one image's layers, config and manifest as blobs. The
// layers of an image read from a registry are verified by the reader
// go-containerregistry returns for them; every other layer is hashed.
func (b *builder) writeImage(img v1.Image, fromRegistry bool) (v1.Descriptor, error) {
	layers, err := img.Layers()
	if err != nil {
		return v1.Descriptor{}, fmt.Errorf("failed to list the layers: %w", err)
	}
	for _, layer := range layers {
		digest, err := layer.Digest()
		if err != nil {
			return v1.Descriptor{}, fmt.Errorf("failed to read a layer digest: %w", err)
		}
		size, err := layer.Size()
		if err != nil {
			return v1.Descriptor{}, fmt.Errorf("failed to read the size of layer %s: %w", digest, err)
		}
		if err := b.writeBlob(digest, size, layer.Compressed, fromRegistry); err != nil {
			return v1.Descriptor{}, err
		}
	}
	config, err := img.RawConfigFile()
	if err != nil {
		return v1.Descriptor{}, fmt.Errorf("failed to read the config: %w", err)
	}
	if _, err := b.writeSmallBlob(config); err != nil {
		return v1.Descriptor{}, err
	}
	manifest, err := img.RawManifest()
	if err != nil {
		return v1.Descriptor{}, fmt.Errorf("failed to read the manifest: %w", err)
	}
	mediaType, err := img.MediaType()
	if err != nil {
		return v1.Descriptor{}, fmt.Errorf("failed to read the media type: %w", err)
	}
	return b.writeRawManifest(manifest, mediaType)
}

// writeRawManifest stores a manifest as it is and returns its descriptor.
func (b *builder) writeRawManifest(raw []byte, mediaType types.MediaType) (v1.Descriptor, error) {
	digest, err := b.writeSmallBlob(raw)
	if err != nil {
		return v1.Descriptor{}, err
	}
	return v1.Descriptor{MediaType: mediaType, Size: int64(len(raw)), Digest: digest}, nil
}
