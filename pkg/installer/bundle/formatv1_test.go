package bundle

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/registrytest"
)

// asVersion1 rewrites the bundle file the way format version 1 wrote it:
// one platform for the bundle and each image, no SBOM, no referrers.
func asVersion1(t *testing.T, file string) string {
	t.Helper()
	var kept []entry
	for _, e := range readEntries(t, file) {
		switch e.name {
		case SBOMFile:
			continue
		case MetadataFile:
			var meta Metadata
			if err := json.Unmarshal(e.data, &meta); err != nil {
				t.Fatal(err)
			}
			v1 := map[string]any{"formatVersion": 1, "platform": meta.Platforms[0], "charts": meta.Charts}
			var images []map[string]string
			for _, img := range meta.Images {
				images = append(images, map[string]string{"ref": img.Ref, "digest": img.Digest, "platform": img.Platforms[0]})
			}
			v1["images"] = images
			data, err := json.Marshal(v1)
			if err != nil {
				t.Fatal(err)
			}
			e.data = data
		}
		kept = append(kept, e)
	}
	return rechecksum(t, kept)
}

func TestVersion1BundlesAreRead(t *testing.T) {
	reg := registrytest.Start(t)
	serve(t, reg, indexRef, platformImage(t, "linux/arm64"))
	current, err := bundleOf(t, reg, []string{indexRef}, false, "linux/arm64")
	if err != nil {
		t.Fatal(err)
	}
	file := asVersion1(t, current)
	v, err := Verify(file)
	if err != nil {
		t.Fatalf("verify of a format version 1 bundle: %v", err)
	}
	m := v.Metadata
	if m.FormatVersion != formatVersion1 || !slices.Equal(m.Platforms, []string{"linux/arm64"}) || len(m.Images) != 1 ||
		m.Images[0].Ref != indexRef || !slices.Equal(m.Images[0].Platforms, []string{"linux/arm64"}) || v.SBOM != nil {
		t.Errorf("metadata of a format version 1 bundle: %+v", m)
	}
	_, dst := pushBundle(t, file)
	desc, err := remote.Head(registrytest.Relocated(t, dst, indexRef))
	if err != nil {
		t.Fatalf("the image of a format version 1 bundle was not pushed: %v", err)
	}
	if desc.Digest.String() != m.Images[0].Digest {
		t.Errorf("pushed %s, the bundle stores %s", desc.Digest, m.Images[0].Digest)
	}
}

func TestUnknownFormatVersionRefused(t *testing.T) {
	_, err := decodeMetadata([]byte(`{"formatVersion": 3}`))
	want := fmt.Sprintf("bundle format version 3 is not supported (want %d or %d)", formatVersion1, FormatVersion)
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}
