package bundle

import (
	"slices"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/registrytest"
)

const sbomArtifactType = "application/vnd.example.sbom+json"

// signedImage serves an image at indexRef with a cosign signature tag and
// an OCI referrer, and returns the image's digest, the signature's and the
// referrer's.
func signedImage(t *testing.T, reg *registrytest.Registry) (subject, sig, referrer v1.Hash) {
	t.Helper()
	img := platformImage(t, "linux/amd64")
	src := serve(t, reg, indexRef, img)
	subject = digestOf(t, img)
	signature, err := random.Image(128, 1)
	if err != nil {
		t.Fatal(err)
	}
	serve(t, reg, src.Context().Tag("sha256-"+subject.Hex+".sig").String(), signature)
	artifact, err := random.Image(128, 1)
	if err != nil {
		t.Fatal(err)
	}
	artifact = mutate.ConfigMediaType(mutate.MediaType(artifact, types.OCIManifestSchema1), types.MediaType(sbomArtifactType))
	desc, err := remote.Head(src)
	if err != nil {
		t.Fatal(err)
	}
	artifact = mutate.Subject(artifact, *desc).(v1.Image)
	referrer = digestOf(t, artifact)
	if err := remote.Write(src.Context().Digest(referrer.String()), artifact); err != nil {
		t.Fatalf("failed to serve the referrer: %v", err)
	}
	return subject, digestOf(t, signature), referrer
}

func digestOf(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestReferrersAreKept: a cosign signature tag and an OCI referrer of an
// image are stored with it and pushed with it, the signature under its tag
// and the referrer as a referrer of the same subject, from and to
// registries with and without the referrers API. With referrers off
// neither is stored.
func TestReferrersAreKept(t *testing.T) {
	for _, tc := range []struct {
		name string
		api  []registrytest.Option
	}{{"referrers API", []registrytest.Option{registrytest.WithReferrersAPI()}}, {"fallback tag schema", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			reg := registrytest.Start(t, tc.api...)
			subject, sig, referrer := signedImage(t, reg)
			file, err := bundleOf(t, reg, []string{indexRef}, true)
			if err != nil {
				t.Fatal(err)
			}
			v, err := Verify(file)
			if err != nil {
				t.Fatal(err)
			}
			repo := "quay.io/kubevirt/virt-api"
			want := []ReferrerEntry{
				{Ref: repo + ":sha256-" + subject.Hex + ".sig", Digest: sig.String(), MediaType: string(types.DockerManifestSchema2)},
				{Ref: repo + "@" + referrer.String(), Digest: referrer.String(), MediaType: string(types.OCIManifestSchema1)},
			}
			if got := v.Metadata.Images[0].Referrers; !slices.Equal(got, want) {
				t.Errorf("referrers %+v, want %+v", got, want)
			}
			_, dst := pushBundle(t, file, tc.api...)
			checkMirrorReferrers(t, dst, subject, sig, []v1.Hash{referrer})
		})
	}
	t.Run("off", func(t *testing.T) {
		reg := registrytest.Start(t, registrytest.WithReferrersAPI())
		subject, _, _ := signedImage(t, reg)
		file, err := bundleOf(t, reg, []string{indexRef}, false)
		if err != nil {
			t.Fatal(err)
		}
		v, err := Verify(file)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.Metadata.Images[0].Referrers; len(got) != 0 {
			t.Errorf("referrers %+v stored with referrers off", got)
		}
		_, dst := pushBundle(t, file, registrytest.WithReferrersAPI())
		checkMirrorReferrers(t, dst, subject, v1.Hash{}, nil)
	})
}

// checkMirrorReferrers checks that dst has the signature tag of subject
// with digest sig (none when sig is zero) and exactly the referrers want.
func checkMirrorReferrers(t *testing.T, dst mirror.Registry, subject, sig v1.Hash, want []v1.Hash) {
	t.Helper()
	ref := registrytest.Relocated(t, dst, indexRef)
	desc, err := remote.Head(ref.Context().Tag("sha256-" + subject.Hex + ".sig"))
	switch {
	case sig == v1.Hash{} && err == nil:
		t.Errorf("the mirror has signature %s with referrers off", desc.Digest)
	case sig != v1.Hash{} && (err != nil || desc.Digest != sig):
		t.Errorf("the mirror's signature tag: %v %v, want digest %s", desc, err, sig)
	}
	idx, err := remote.Referrers(ref.Context().Digest(subject.String()))
	if err != nil {
		t.Fatal(err)
	}
	list, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var got []v1.Hash
	for _, d := range list.Manifests {
		got = append(got, d.Digest)
		if d.ArtifactType != sbomArtifactType {
			t.Errorf("referrer %s has artifact type %q, want %q", d.Digest, d.ArtifactType, sbomArtifactType)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the mirror lists referrers %v of %s, want %v", got, subject, want)
	}
}
