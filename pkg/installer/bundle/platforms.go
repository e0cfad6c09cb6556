package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// DefaultPlatform is the platform a bundle holds when none is chosen.
const DefaultPlatform = "linux/amd64"

// attestationType is the annotation value docker buildx gives the index
// entries that hold a platform's attestations rather than an image.
const attestationType = "attestation-manifest"

// Docker's annotations of an attestation entry: its kind and the digest of
// the image it describes.
const (
	annotationReferenceType   = "vnd.docker.reference.type"
	annotationReferenceDigest = "vnd.docker.reference.digest"
)

// ParsePlatforms parses os/architecture[/variant] values, each of which may
// list several separated by commas; none is DefaultPlatform.
func ParsePlatforms(values []string) ([]v1.Platform, error) {
	var out []v1.Platform
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			p, err := v1.ParsePlatform(strings.TrimSpace(s))
			if err != nil || p.OS == "" || p.Architecture == "" {
				return nil, fmt.Errorf("platform %q is not os/architecture[/variant]", s)
			}
			out = append(out, *p)
		}
	}
	if len(out) == 0 {
		out = append(out, v1.Platform{OS: "linux", Architecture: "amd64"})
	}
	return out, nil
}

// platformStrings renders platforms as os/architecture[/variant].
func platformStrings(platforms []v1.Platform) []string {
	out := make([]string, 0, len(platforms))
	for _, p := range platforms {
		out = append(out, p.String())
	}
	return out
}

// indexPlatforms are the platforms of the manifests idx lists.
func indexPlatforms(idx v1.ImageIndex) []v1.Platform {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil
	}
	var out []v1.Platform
	for _, d := range m.Manifests {
		if d.Platform != nil && !isAttestation(d) {
			out = append(out, *d.Platform)
		}
	}
	return out
}

// isDigestRef reports whether ref names its image by digest.
func isDigestRef(ref string) bool {
	_, err := name.NewDigest(ref)
	return err == nil
}

// chosen reports whether p is one of want.
func chosen(p *v1.Platform, want []v1.Platform) bool {
	return p != nil && slices.ContainsFunc(want, func(w v1.Platform) bool { return p.Satisfies(w) })
}

// isAttestation reports whether d is buildx's attestation entry.
func isAttestation(d v1.Descriptor) bool {
	return d.Annotations[annotationReferenceType] == attestationType
}

// selection is what of an upstream index a bundle stores.
type selection struct {
	// index is the stored index: the upstream one or a filtered copy.
	index v1.ImageIndex
	// platforms are the stored platforms.
	platforms []string
	// filtered tells that index is a filtered copy with its own digest.
	filtered bool
}

// selectPlatforms picks the manifests of want from the index of ref. With
// every platform of the index chosen the index is kept byte for byte;
// otherwise a new index lists the chosen manifests, and the attestations
// of those, and has a digest of its own. A chosen platform the index lacks
// is an error naming the image and the platforms it has.
func selectPlatforms(ref string, idx v1.ImageIndex, want []v1.Platform) (*selection, error) {
	manifest, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("failed to read the index: %w", err)
	}
	var have, kept []string
	keptDigests := map[string]bool{}
	all := true
	for _, d := range manifest.Manifests {
		if isAttestation(d) || d.Platform == nil {
			continue
		}
		have = append(have, d.Platform.String())
		if chosen(d.Platform, want) {
			kept = append(kept, d.Platform.String())
			keptDigests[d.Digest.String()] = true
		} else {
			all = false
		}
	}
	for _, w := range want {
		if !slices.ContainsFunc(manifest.Manifests, func(d v1.Descriptor) bool { return chosen(d.Platform, []v1.Platform{w}) }) {
			return nil, fmt.Errorf("image %s has no platform %s (it has %s)", ref, w.String(), strings.Join(have, ", "))
		}
	}
	if all {
		return &selection{index: idx, platforms: kept}, nil
	}
	var adds []mutate.IndexAddendum
	for _, d := range manifest.Manifests {
		attestsKept := isAttestation(d) && keptDigests[d.Annotations[annotationReferenceDigest]]
		if !keptDigests[d.Digest.String()] && !attestsKept {
			continue
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, fmt.Errorf("failed to read the manifest of %s: %w", d.Platform, err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: d})
	}
	filtered := mutate.IndexMediaType(mutate.AppendManifests(empty.Index, adds...), manifest.MediaType)
	if len(manifest.Annotations) > 0 {
		filtered = mutate.Annotations(filtered, manifest.Annotations).(v1.ImageIndex)
	}
	return &selection{index: filtered, platforms: kept, filtered: true}, nil
}

// checkImagePlatform refuses an image whose config names a platform that
// is not in want; an image whose config names none is taken as it is.
func checkImagePlatform(ref string, img v1.Image, want []v1.Platform) ([]string, error) {
	p, err := imagePlatform(img)
	if err != nil {
		return nil, fmt.Errorf("failed to read the platform of %s: %w", ref, err)
	}
	if p == nil {
		return nil, nil
	}
	if !chosen(p, want) {
		return nil, fmt.Errorf("image %s is a single-platform image for %s, which is not among the chosen platforms %s",
			ref, p, strings.Join(platformStrings(want), ", "))
	}
	return []string{p.String()}, nil
}

// imagePlatform is the platform of img's config, nil when the config names
// none.
func imagePlatform(img v1.Image) (*v1.Platform, error) {
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	if cfg.OS == "" || cfg.Architecture == "" {
		return nil, nil
	}
	return &v1.Platform{OS: cfg.OS, Architecture: cfg.Architecture, Variant: cfg.Variant, OSVersion: cfg.OSVersion}, nil
}

// maxManifestSize bounds the blobs Read keeps to check platforms with:
// manifests, indexes and configs are far smaller.
const maxManifestSize = 4 << 20

// checkPlatforms refuses a bundle whose metadata claims a platform for an
// image that its stored manifest lacks: an index must list a stored
// manifest for each claimed platform, an image's config must name the
// claimed one. blobs holds the JSON blobs of the layout by hex digest.
func checkPlatforms(meta Metadata, blobs map[string][]byte) error {
	var missing []string
	for _, img := range meta.Images {
		if len(img.Platforms) == 0 {
			continue
		}
		have, err := storedPlatforms(img.Digest, blobs)
		if err != nil {
			return fmt.Errorf("failed to read the platforms of %s: %w", img.Ref, err)
		}
		for _, p := range img.Platforms {
			if !slices.Contains(have, p) {
				missing = append(missing, fmt.Sprintf("%s claims platform %s but stores only [%s]", img.Ref, p, strings.Join(have, ", ")))
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s does not match the stored images: %s", MetadataFile, strings.Join(missing, "; "))
	}
	return nil
}

// storedPlatforms returns the platforms of the stored manifest or index
// with digest.
func storedPlatforms(digest string, blobs map[string][]byte) ([]string, error) {
	h, err := v1.NewHash(digest)
	if err != nil {
		return nil, fmt.Errorf("failed to parse digest %q: %w", digest, err)
	}
	raw, ok := blobs[h.Hex]
	if !ok {
		return nil, fmt.Errorf("manifest %s is not in the bundle", digest)
	}
	var m struct {
		Manifests []v1.Descriptor `json:"manifests"`
		Config    *v1.Descriptor  `json:"config"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("failed to decode manifest %s: %w", digest, err)
	}
	if m.Config == nil {
		var have []string
		for _, d := range m.Manifests {
			if _, stored := blobs[d.Digest.Hex]; stored && d.Platform != nil && !isAttestation(d) {
				have = append(have, d.Platform.String())
			}
		}
		return have, nil
	}
	rawConfig, ok := blobs[m.Config.Digest.Hex]
	if !ok {
		return nil, fmt.Errorf("config %s is not in the bundle", m.Config.Digest)
	}
	cfg, err := v1.ParseConfigFile(bytes.NewReader(rawConfig))
	if err != nil {
		return nil, fmt.Errorf("failed to decode config %s: %w", m.Config.Digest, err)
	}
	if cfg.OS == "" || cfg.Architecture == "" {
		return nil, nil
	}
	p := v1.Platform{OS: cfg.OS, Architecture: cfg.Architecture, Variant: cfg.Variant, OSVersion: cfg.OSVersion}
	return []string{p.String()}, nil
}
