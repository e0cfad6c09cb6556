package imagebuild

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"
)

// Media types and annotations of the attached manifests.
const (
	// SBOMMediaType is the artifact type of the SBOM and its layer.
	SBOMMediaType = "application/vnd.cyclonedx+json"
	// emptyMediaType is the config of an artifact that has none.
	emptyMediaType = "application/vnd.oci.empty.v1+json"
	// SimpleSigningMediaType is the layer of a cosign signature: the
	// signed payload.
	SimpleSigningMediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	// SignatureAnnotation holds a layer's base64 signature of its payload.
	SignatureAnnotation = "dev.cosignproject.cosign/signature"
	// SignatureSuffix ends the tag cosign stores an image's signatures
	// under: sha256-<hex>.sig.
	SignatureSuffix = ".sig"
)

// attach adds the SBOM and, with a signer, the signature to b.
func attach(o *Options, b *Built) error {
	sbom, err := imageSBOM(o, b)
	if err != nil {
		return err
	}
	subject, err := partial.Descriptor(b.Index)
	if err != nil {
		return fmt.Errorf("failed to describe the index: %w", err)
	}
	art, err := artifact(sbom, SBOMMediaType, "sbom.cdx.json", *subject, o.Created)
	if err != nil {
		return err
	}
	artDigest, err := art.Digest()
	if err != nil {
		return fmt.Errorf("failed to hash the SBOM manifest: %w", err)
	}
	repo := b.repository()
	b.Referrers = append(b.Referrers, Referrer{Ref: repo + "@" + artDigest.String(), Image: art})
	if o.Signer == nil {
		return nil
	}
	sig, err := Signature(o.Signer, repo, b.Digest)
	if err != nil {
		return err
	}
	b.Referrers = append(b.Referrers, Referrer{Ref: SignatureTag(repo, b.Digest), Image: sig})
	return nil
}

// repository is b's repository, without tag.
func (b *Built) repository() string {
	ref, err := name.ParseReference(b.Ref)
	if err != nil {
		return b.Ref
	}
	return ref.Context().Name()
}

// SignatureTag is where cosign keeps the signatures of digest in repo.
func SignatureTag(repo string, digest v1.Hash) string {
	return repo + ":" + digest.Algorithm + "-" + digest.Hex + SignatureSuffix
}

// artifact is an OCI 1.1 artifact manifest of one blob, attached to
// subject, with the empty config.
func artifact(data []byte, mediaType, title string, subject v1.Descriptor, created time.Time) (v1.Image, error) {
	blob := static.NewLayer(data, types.MediaType(mediaType))
	digest, err := blob.Digest()
	if err != nil {
		return nil, fmt.Errorf("failed to hash the artifact: %w", err)
	}
	config := []byte("{}")
	configDigest, _, err := v1.SHA256(bytes.NewReader(config))
	if err != nil {
		return nil, fmt.Errorf("failed to hash the empty config: %w", err)
	}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		Config:        v1.Descriptor{MediaType: emptyMediaType, Size: int64(len(config)), Digest: configDigest},
		Layers: []v1.Descriptor{{MediaType: types.MediaType(mediaType), Size: int64(len(data)), Digest: digest,
			Annotations: map[string]string{LabelTitle: title}}},
		Subject:     &v1.Descriptor{MediaType: subject.MediaType, Size: subject.Size, Digest: subject.Digest},
		Annotations: map[string]string{LabelCreated: created.UTC().Format(time.RFC3339)},
	}
	type withArtifactType struct {
		v1.Manifest
		ArtifactType string `json:"artifactType"`
	}
	raw, err := json.Marshal(withArtifactType{Manifest: m, ArtifactType: mediaType})
	if err != nil {
		return nil, fmt.Errorf("failed to encode the artifact manifest: %w", err)
	}
	return partial.CompressedToImage(&rawImage{manifest: raw, config: config, blobs: map[v1.Hash]v1.Layer{digest: blob}})
}

// rawImage is a manifest with its blobs as they are.
type rawImage struct {
	manifest, config []byte
	blobs            map[v1.Hash]v1.Layer
}

func (r *rawImage) RawConfigFile() ([]byte, error)      { return r.config, nil }
func (r *rawImage) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (r *rawImage) RawManifest() ([]byte, error)        { return r.manifest, nil }
func (r *rawImage) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if l, ok := r.blobs[h]; ok {
		return l, nil
	}
	return nil, fmt.Errorf("blob %s is not in the manifest", h)
}

// Signature is the cosign signature manifest of digest in repo: one
// simple-signing payload layer (what cosign sign signs: the digest and
// the repository) with its signature in an annotation. cosign verify
// --key checks it.
func Signature(s signature.Signer, repo string, digest v1.Hash) (v1.Image, error) {
	d, err := name.NewDigest(repo + "@" + digest.String())
	if err != nil {
		return nil, fmt.Errorf("failed to name the signed image: %w", err)
	}
	body, err := json.Marshal(payload.Cosign{Image: d})
	if err != nil {
		return nil, fmt.Errorf("failed to encode the signature payload: %w", err)
	}
	sig, err := s.SignMessage(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("failed to sign %s: %w", d, err)
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	return mutate.Append(img, mutate.Addendum{
		Layer:       static.NewLayer(body, SimpleSigningMediaType),
		Annotations: map[string]string{SignatureAnnotation: base64.StdEncoding.EncodeToString(sig)},
	})
}

// ErrUnsigned is returned by Verify for an image without a signature.
var ErrUnsigned = errors.New("the image has no signature")

// Verify checks, as cosign verify --key does, that a signature stored
// under the cosign tag of ref's digest was made with key over a payload
// that names that digest; it returns the digest.
func Verify(ref name.Reference, key signature.Verifier, opts ...remote.Option) (v1.Hash, error) {
	desc, err := remote.Head(ref, opts...)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("failed to resolve %s: %w", ref, err)
	}
	sigRef, err := name.ParseReference(SignatureTag(ref.Context().Name(), desc.Digest))
	if err != nil {
		return v1.Hash{}, fmt.Errorf("failed to name the signature of %s: %w", ref, err)
	}
	sigs, err := remote.Image(sigRef, opts...)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("%w: %s: %w", ErrUnsigned, sigRef, err)
	}
	if err := verifySignatures(sigs, desc.Digest, key); err != nil {
		return v1.Hash{}, fmt.Errorf("the signatures of %s (%s) do not verify: %w", ref, sigRef, err)
	}
	return desc.Digest, nil
}

// verifySignatures succeeds when one layer of sigs is a payload naming
// digest that key signed.
func verifySignatures(sigs v1.Image, digest v1.Hash, key signature.Verifier) error {
	m, err := sigs.Manifest()
	if err != nil {
		return fmt.Errorf("failed to read the signature manifest: %w", err)
	}
	var errs []error
	for _, l := range m.Layers {
		if l.MediaType != SimpleSigningMediaType {
			continue
		}
		errs = append(errs, verifyLayer(sigs, l, digest, key))
		if errs[len(errs)-1] == nil {
			return nil
		}
	}
	if len(errs) == 0 {
		return fmt.Errorf("no %s layer", SimpleSigningMediaType)
	}
	return errors.Join(errs...)
}

// maxPayloadSize bounds a signature payload, a few hundred bytes.
const maxPayloadSize = 1 << 20

// verifyLayer checks one signature layer.
func verifyLayer(sigs v1.Image, l v1.Descriptor, digest v1.Hash, key signature.Verifier) error {
	raw, err := base64.StdEncoding.DecodeString(l.Annotations[SignatureAnnotation])
	if err != nil || len(raw) == 0 {
		return fmt.Errorf("layer %s has no base64 %s annotation", l.Digest, SignatureAnnotation)
	}
	layer, err := sigs.LayerByDigest(l.Digest)
	if err != nil {
		return fmt.Errorf("failed to read layer %s: %w", l.Digest, err)
	}
	rc, err := layer.Compressed()
	if err != nil {
		return fmt.Errorf("failed to read layer %s: %w", l.Digest, err)
	}
	defer func() { _ = rc.Close() }()
	body, err := io.ReadAll(io.LimitReader(rc, maxPayloadSize))
	if err != nil {
		return fmt.Errorf("failed to read layer %s: %w", l.Digest, err)
	}
	if err := key.VerifySignature(bytes.NewReader(raw), bytes.NewReader(body)); err != nil {
		return fmt.Errorf("layer %s: %w", l.Digest, err)
	}
	var p payload.Cosign
	if err := json.Unmarshal(body, &p); err != nil {
		return fmt.Errorf("layer %s: %w", l.Digest, err)
	}
	if p.Image.DigestStr() != digest.String() {
		return fmt.Errorf("layer %s signs %s, not %s", l.Digest, p.Image.DigestStr(), digest)
	}
	return nil
}
