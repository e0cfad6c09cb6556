package bundle

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
)

// CosignSuffixes are the tag suffixes under which cosign stores the
// signatures, attestations and SBOMs of an image: tag
// sha256-<hex><suffix> in the image's repository.
var CosignSuffixes = []string{".sig", ".att", ".sbom"}

// PullOptions are the inputs of Pull.
type PullOptions struct {
	// Transfer tunes the registry requests; its Platform is not used.
	Transfer mirror.Options
	// Referrers fetches the manifests attached to each image: cosign's
	// tags and OCI referrers.
	Referrers bool
}

// Pull returns the images of refs from their upstream registries, or from
// the mirrors m names. An image index is returned whole, as Index, for
// Create to select platforms from; only manifests and configs are fetched
// here, layers are read when the bundle is written.
func Pull(ctx context.Context, refs []string, m mirror.Mirrors, opts PullOptions) ([]mirror.Item, error) {
	ropts := opts.Transfer.RemoteOptions(ctx)
	// One puller for every request keeps the registries' authentication
	// and saves a ping per lookup.
	puller, err := remote.NewPuller(ropts...)
	if err != nil {
		return nil, fmt.Errorf("failed to set up pulling: %w", err)
	}
	ropts = append(ropts, remote.Reuse(puller))
	items := make([]mirror.Item, 0, len(refs))
	for _, ref := range refs {
		src, err := m.Source(ref)
		if err != nil {
			return nil, err
		}
		desc, err := remote.Get(src, ropts...)
		if err != nil {
			return nil, fmt.Errorf("failed to pull %s from %s: %w", ref, src, err)
		}
		item, err := descriptorItem(ref, desc)
		if err != nil {
			return nil, fmt.Errorf("failed to read %s from %s: %w", ref, src, err)
		}
		if opts.Referrers {
			if item.Referrers, err = pullReferrers(src.Context(), desc.Digest, ref, ropts); err != nil {
				return nil, fmt.Errorf("failed to pull the referrers of %s from %s: %w", ref, src, err)
			}
		}
		items = append(items, item)
	}
	return items, nil
}

// descriptorItem is the item of a fetched manifest: an index or an image,
// whose blobs are read from the registry.
func descriptorItem(ref string, desc *remote.Descriptor) (mirror.Item, error) {
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		return mirror.Item{Ref: ref, Index: idx, FromRegistry: true}, err
	}
	img, err := desc.Image()
	return mirror.Item{Ref: ref, Image: img, FromRegistry: true}, err
}

// pullReferrers returns what is attached to digest in repo: the manifests
// of cosign's tags and the OCI referrers, which remote.Referrers reads
// from the referrers API or, where a registry lacks it, from the fallback
// tag sha256-<hex>. Each is named in the upstream repository of ref. An
// image without any is the common case and no error.
func pullReferrers(repo name.Repository, digest v1.Hash, ref string, ropts []remote.Option) ([]mirror.Item, error) {
	upstream, err := name.ParseReference(ref)
	if err != nil {
		return nil, fmt.Errorf("failed to parse image %q: %w", ref, err)
	}
	base := upstream.Context().Name()
	var out []mirror.Item
	for _, suffix := range CosignSuffixes {
		tag := digest.Algorithm + "-" + digest.Hex + suffix
		desc, err := remote.Get(repo.Tag(tag), ropts...)
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("failed to read tag %s: %w", tag, err)
		}
		item, err := descriptorItem(base+":"+tag, desc)
		if err != nil {
			return nil, fmt.Errorf("failed to read tag %s: %w", tag, err)
		}
		out = append(out, item)
	}
	idx, err := remote.Referrers(repo.Digest(digest.String()), ropts...)
	if err != nil {
		return nil, fmt.Errorf("failed to list the referrers: %w", err)
	}
	list, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("failed to list the referrers: %w", err)
	}
	for _, d := range list.Manifests {
		desc, err := remote.Get(repo.Digest(d.Digest.String()), ropts...)
		if err != nil {
			return nil, fmt.Errorf("failed to read referrer %s: %w", d.Digest, err)
		}
		item, err := descriptorItem(base+"@"+d.Digest.String(), desc)
		if err != nil {
			return nil, fmt.Errorf("failed to read referrer %s: %w", d.Digest, err)
		}
		out = append(out, item)
	}
	return out, nil
}

// isNotFound reports whether err is a registry's 404.
func isNotFound(err error) bool {
	var terr *transport.Error
	return errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound
}
