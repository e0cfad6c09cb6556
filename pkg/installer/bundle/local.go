package bundle

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
)

// FromLayout takes the images of refs that the OCI layout at dir holds
// (written by make images or WriteLayout) from there, with their
// referrers, and returns them and the refs it does not hold. A reference
// by digest matches the stored index or image of that digest in the same
// repository; a reference by tag the entry stored under that very
// reference. Each returned item is named by its ref, its referrers by the
// same repository; their blobs are hashed when the bundle is written.
func FromLayout(dir string, refs []string) ([]mirror.Item, []string, error) {
	stored, err := LayoutImages(dir)
	if err != nil {
		return nil, nil, err
	}
	var found []mirror.Item
	var rest []string
	for _, ref := range refs {
		item, ok, err := match(stored, ref)
		if err != nil {
			return nil, nil, fmt.Errorf("failed to look up %s in %s: %w", ref, dir, err)
		}
		if !ok {
			rest = append(rest, ref)
			continue
		}
		found = append(found, item)
	}
	return found, rest, nil
}

// match finds ref among stored and renames it and its referrers to ref's
// repository.
func match(stored []mirror.Item, ref string) (mirror.Item, bool, error) {
	want, err := name.ParseReference(ref, name.StrictValidation)
	if err != nil {
		return mirror.Item{}, false, fmt.Errorf("failed to parse image %q: %w", ref, err)
	}
	for _, item := range stored {
		have, err := name.ParseReference(item.Ref)
		if err != nil || have.Context().Name() != want.Context().Name() {
			continue
		}
		if d, ok := want.(name.Digest); ok {
			digest, err := itemDigest(item)
			if err != nil {
				return mirror.Item{}, false, err
			}
			if digest != d.DigestStr() {
				continue
			}
		} else if have.Name() != want.Name() {
			continue
		}
		return rename(item, ref, want.Context().Name()), true, nil
	}
	return mirror.Item{}, false, nil
}

// itemDigest is the digest of an item's index or image.
func itemDigest(item mirror.Item) (string, error) {
	if item.Index != nil {
		d, err := item.Index.Digest()
		return d.String(), err
	}
	d, err := item.Image.Digest()
	return d.String(), err
}

// rename names item ref and moves its referrers' references, which are
// REPOSITORY:tag or REPOSITORY@digest, to repo.
func rename(item mirror.Item, ref, repo string) mirror.Item {
	out := mirror.Item{Ref: ref, Index: item.Index, Image: item.Image}
	for _, r := range item.Referrers {
		moved := r
		if parsed, err := name.ParseReference(r.Ref); err == nil {
			moved.Ref = repo + strings.TrimPrefix(r.Ref, parsed.Context().Name())
		}
		out.Referrers = append(out.Referrers, moved)
	}
	return out
}
