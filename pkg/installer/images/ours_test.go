package images

import (
	"strings"
	"testing"
)

// TestOursPinnedByDigest: with the repository and digests a release build
// sets, the table names our controllers there by tag and digest, and the
// set validates; without them, by tag in the default repository.
func TestOursPinnedByDigest(t *testing.T) {
	mc, infra := "sha256:"+strings.Repeat("a", 64), "sha256:"+strings.Repeat("b", 64)
	for _, tc := range []struct {
		name, repository, digests string
		want                      map[string]string
	}{
		{"development build", DefaultRepository, "", map[string]string{
			"machine-controller": DefaultRepository + "/machine-controller:v0.1.0",
			"infra-controller":   DefaultRepository + "/infra-controller:v0.1.0",
		}},
		{"release build", "registry.example:5000/kkp", DigestsValue(map[string]string{"machine-controller": mc, "infra-controller": infra, "kubevirt-installer": mc}), map[string]string{
			"machine-controller": "registry.example:5000/kkp/machine-controller:v0.1.0@" + mc,
			"infra-controller":   "registry.example:5000/kkp/infra-controller:v0.1.0@" + infra,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oldRepository, oldDigests := ourRepository, ourDigests
			t.Cleanup(func() { ourRepository, ourDigests = oldRepository, oldDigests })
			ourRepository, ourDigests = tc.repository, tc.digests
			for component, want := range tc.want {
				set, err := Pinned(component, "v0.1.0")
				if err != nil {
					t.Fatal(err)
				}
				if set[0].Name != component || set[0].Ref != want {
					t.Errorf("%s: image %s is %s, want %s", component, set[0].Name, set[0].Ref, want)
				}
			}
		})
	}
}
