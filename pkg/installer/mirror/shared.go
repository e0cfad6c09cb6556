package mirror

import (
	"context"
	"fmt"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// sharedBlobs makes the images of one Copy upload each layer that several
// of them share once. Without it, every image in flight that finds such a
// layer missing uploads it too: with Jobs images starting together on a
// common base layer, the base goes up Jobs times.
//
// The first image to reach a shared layer owns it and uploads it before
// its own manifest; the others wait for the owner and then mount the layer
// from the owner's repository, which registries do without moving the
// bytes again (a registry that cannot mount is sent the layer). An owner
// never waits for another image before finishing its uploads, so no image
// waits for one that waits for it.
type sharedBlobs struct {
	mu sync.Mutex
	// shared holds the digests of the layers used by more than one image.
	shared map[v1.Hash]bool
	// owners are the shared layers claimed so far.
	owners map[v1.Hash]*blobOwner
}

// blobOwner is the upload of one shared layer.
type blobOwner struct {
	// done is closed when the upload has ended, successfully or not.
	done chan struct{}
	// repo is where the layer is uploaded.
	repo name.Repository
}

// newSharedBlobs finds the layers that more than one image of items and
// their referrers use; each image of an index counts as one image.
func newSharedBlobs(items []Item) (*sharedBlobs, error) {
	uses := map[v1.Hash]int{}
	var count func(Item) error
	count = func(item Item) error {
		layers, err := itemLayers(item)
		if err != nil {
			return err
		}
		for _, l := range layers {
			uses[l.digest]++
		}
		for _, r := range item.Referrers {
			if err := count(r); err != nil {
				return err
			}
		}
		return nil
	}
	for _, item := range items {
		if err := count(item); err != nil {
			return nil, fmt.Errorf("failed to list the layers of %s: %w", item.Ref, err)
		}
	}
	s := &sharedBlobs{shared: map[v1.Hash]bool{}, owners: map[v1.Hash]*blobOwner{}}
	for d, n := range uses {
		if n > 1 {
			s.shared[d] = true
		}
	}
	return s, nil
}

// digestLayer is a layer with its digest.
type digestLayer struct {
	digest v1.Hash
	layer  v1.Layer
}

// itemLayers returns the layers of an item's image, or of every image its
// index lists, each layer once per image.
func itemLayers(item Item) ([]digestLayer, error) {
	if item.Index == nil {
		return imageLayers(item.Image)
	}
	manifest, err := item.Index.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("failed to read the index: %w", err)
	}
	var out []digestLayer
	for _, d := range manifest.Manifests {
		child, ok, err := IndexEntry(item.Index, d)
		if !ok {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("failed to read index entry %s: %w", d.Digest, err)
		}
		layers, err := itemLayers(child)
		if err != nil {
			return nil, err
		}
		out = append(out, layers...)
	}
	return out, nil
}

// IndexEntry returns the image or index that entry d of idx lists, as an
// item without a reference; ok is false for an entry of another media
// type, which is neither read nor an error.
func IndexEntry(idx v1.ImageIndex, d v1.Descriptor) (item Item, ok bool, err error) {
	switch {
	case d.MediaType.IsIndex():
		item.Index, err = idx.ImageIndex(d.Digest)
	case d.MediaType.IsImage():
		item.Image, err = idx.Image(d.Digest)
	default:
		return Item{}, false, nil
	}
	return item, true, err
}

// imageLayers returns the distinct layers of img.
func imageLayers(img v1.Image) ([]digestLayer, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("failed to list the layers: %w", err)
	}
	seen := map[v1.Hash]bool{}
	out := make([]digestLayer, 0, len(layers))
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return nil, fmt.Errorf("failed to read a layer digest: %w", err)
		}
		if !seen[d] {
			seen[d] = true
			out = append(out, digestLayer{digest: d, layer: l})
		}
	}
	return out, nil
}

// upload puts the shared layers of item into repo before the item is
// written: it uploads the ones it is the first to claim, then waits for the
// others' owners and mounts them. remote.Write then finds every shared
// layer present and uploads only the item's own.
func (s *sharedBlobs) upload(ctx context.Context, item Item, repo name.Repository, ropts []remote.Option) error {
	layers, err := itemLayers(item)
	if err != nil {
		return fmt.Errorf("failed to list the layers of %s: %w", item.Ref, err)
	}
	var mine []ownedLayer
	waits := map[v1.Hash]*blobOwner{}
	s.mu.Lock()
	for _, l := range layers {
		if !s.shared[l.digest] || waits[l.digest] != nil {
			continue
		}
		if o := s.owners[l.digest]; o != nil {
			waits[l.digest] = o
			continue
		}
		o := &blobOwner{done: make(chan struct{}), repo: repo}
		s.owners[l.digest] = o
		waits[l.digest] = o
		mine = append(mine, ownedLayer{digestLayer: l, owner: o})
	}
	s.mu.Unlock()
	if err := uploadOwned(mine, repo, ropts); err != nil {
		return err
	}
	for _, l := range layers {
		o := waits[l.digest]
		if o == nil {
			continue
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("failed to wait for the upload of layer %s: %w", l.digest, ctx.Err())
		case <-o.done:
		}
		if o.repo == repo {
			// remote.Write finds it here, or uploads it if its owner
			// failed.
			continue
		}
		mount := &remote.MountableLayer{Layer: l.layer, Reference: o.repo.Digest(l.digest.String())}
		if err := remote.WriteLayer(repo, mount, ropts...); err != nil {
			return fmt.Errorf("failed to mount layer %s from %s: %w", l.digest, o.repo, err)
		}
	}
	return nil
}

// ownedLayer is a shared layer and its ownership by the item at hand.
type ownedLayer struct {
	digestLayer
	owner *blobOwner
}

// uploadOwned uploads the layers an item owns, one after the other, and
// ends each one's ownership, whatever the outcome: a waiter whose owner
// failed is sent the layer itself.
func uploadOwned(mine []ownedLayer, repo name.Repository, ropts []remote.Option) error {
	var err error
	for _, l := range mine {
		if err == nil {
			if werr := remote.WriteLayer(repo, l.layer, ropts...); werr != nil {
				err = fmt.Errorf("failed to upload layer %s: %w", l.digest, werr)
			}
		}
		close(l.owner.done)
	}
	return err
}
