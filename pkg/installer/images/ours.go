package images

import (
	"sort"
	"strings"
)

// A release build (make images) sets, with -ldflags -X, where this
// project's own images are published and the digest of each image index
// it built from the same commit, so the installer and its charts reference
// them by digest: repository/name:tag@sha256:....
var (
	ourRepository = DefaultRepository
	// ourDigests is name=sha256:hex pairs, comma-separated.
	ourDigests string
)

// DefaultRepository is where this project's images are published.
const DefaultRepository = "ghcr.io/kubevirt-kkp"

// The -ldflags -X names of the variables above.
const (
	RepositoryVar = "github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/images.ourRepository"
	DigestsVar    = "github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/images.ourDigests"
)

// DigestsValue encodes digests by image name as DigestsVar takes them.
func DigestsValue(digests map[string]string) string {
	pairs := make([]string, 0, len(digests))
	for n, d := range digests {
		pairs = append(pairs, n+"="+d)
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}

// ours is the reference of this project's image name at tag, with the
// digest the build pinned, if any.
func ours(name, tag string) string {
	ref := ourRepository + "/" + name + ":" + tag
	for _, pair := range strings.Split(ourDigests, ",") {
		if n, d, ok := strings.Cut(pair, "="); ok && n == name {
			return ref + "@" + d
		}
	}
	return ref
}
