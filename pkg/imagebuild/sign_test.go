package imagebuild

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/bundle"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/bundle/bundletest"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/registrytest"
)

// TestSignedImageVerifies: an image built with a cosign key and pushed
// with its referrers verifies with the public key; an image changed after
// signing, a signature moved to another image, and another key are
// refused.
func TestSignedImageVerifies(t *testing.T) {
	keys := bundletest.CosignKeyPair(t, t.TempDir(), "cosign", "secret")
	signer, err := bundle.LoadSigner(keys.Private, keys.Password)
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := bundle.LoadVerifier(keys.Public)
	if err != nil {
		t.Fatal(err)
	}
	reg := registrytest.Start(t)
	o := testOptions(tinyModule(t))
	o.Repository, o.Signer = reg.Host+"/kkp", signer
	built, err := Build(t.Context(), o, []Image{hello})
	if err != nil {
		t.Fatal(err)
	}
	if err := Push(t.Context(), built, mirror.Registry{Host: reg.Host}, mirror.Options{Backoff: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(built[0].Ref)
	if err != nil {
		t.Fatal(err)
	}
	digest, err := Verify(ref, verifier)
	if err != nil {
		t.Fatalf("the signed image does not verify: %v", err)
	}
	if digest != built[0].Digest {
		t.Errorf("verified %s, built %s", digest, built[0].Digest)
	}

	other := bundletest.CosignKeyPair(t, t.TempDir(), "other", "secret")
	otherVerifier, err := bundle.LoadVerifier(other.Public)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(ref, otherVerifier); err == nil {
		t.Error("the image verifies with a key that did not sign it")
	}

	// The same tag now names an image changed after signing.
	tampered := mutate.Annotations(built[0].Index, map[string]string{LabelRevision: "tampered"}).(v1.ImageIndex)
	if err := remote.WriteIndex(ref, tampered); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(ref, verifier); !errors.Is(err, ErrUnsigned) {
		t.Errorf("the tampered image: %v, want %v", err, ErrUnsigned)
	}
	// Its signature tag now holds the genuine image's signature.
	tamperedDigest, err := remote.Head(ref)
	if err != nil {
		t.Fatal(err)
	}
	sigRef, err := name.ParseReference(SignatureTag(ref.Context().Name(), tamperedDigest.Digest))
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(sigRef, built[0].Referrers[1].Image); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(ref, verifier); err == nil || !strings.Contains(err.Error(), "signs "+built[0].Digest.String()) {
		t.Errorf("the tampered image with a moved signature: %v, want a refusal naming the signed digest", err)
	}
}
