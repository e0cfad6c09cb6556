package registrytest

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
)

// Counts are the requests a Registry served.
type Counts struct {
	// BlobUploads counts started blob uploads (POST .../blobs/uploads/);
	// a mount request that mounts the blob starts none.
	BlobUploads int
	// Mounts counts blobs mounted from another repository under
	// WithRepositoryBlobs (POST .../blobs/uploads/?mount=...&from=...).
	Mounts int
	// BlobChecks counts blob existence checks (HEAD .../blobs/...).
	BlobChecks int
	// ManifestPuts counts manifest uploads.
	ManifestPuts int
	// Failed counts requests answered with an injected failure.
	Failed int
	// Total counts every request.
	Total int
}

// Registry is an in-process OCI registry.
type Registry struct {
	// Host is the registry's host:port.
	Host string

	server *httptest.Server
	mu     sync.Mutex
	counts Counts
	// failures is how many blob upload requests still fail with 503.
	failures int
	// blobs are the blobs of each repository under WithRepositoryBlobs;
	// nil otherwise.
	blobs repoBlobs
}

// Option configures a Registry.
type Option func(*config)

// config is what the Options of Start set.
type config struct {
	registry        []registry.Option
	repositoryBlobs bool
}

// WithReferrersAPI serves the OCI 1.1 referrers API. Without it the
// registry answers the API with 404, and clients fall back to the
// sha256-<hex> tag schema.
func WithReferrersAPI() Option {
	return func(c *config) { c.registry = append(c.registry, registry.WithReferrersSupport(true)) }
}

// Start serves a registry until the test ends.
func Start(t testing.TB, opts ...Option) *Registry {
	t.Helper()
	r := &Registry{}
	c := config{registry: []registry.Option{registry.Logger(discardLogger)}}
	for _, o := range opts {
		o(&c)
	}
	if c.repositoryBlobs {
		r.blobs = repoBlobs{}
	}
	inner := registry.New(c.registry...)
	r.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.count(req) {
			http.Error(w, "injected transient failure", http.StatusServiceUnavailable)
			return
		}
		r.serve(inner, w, req)
	}))
	t.Cleanup(r.server.Close)
	r.Host = strings.TrimPrefix(r.server.URL, "http://")
	return r
}

// count records req and reports whether it must fail.
func (r *Registry) count(req *http.Request) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts.Total++
	upload := req.Method == http.MethodPost && strings.Contains(req.URL.Path, "/blobs/uploads")
	switch {
	case upload:
		r.counts.BlobUploads++
	case req.Method == http.MethodHead && strings.Contains(req.URL.Path, "/blobs/"):
		r.counts.BlobChecks++
	case req.Method == http.MethodPut && strings.Contains(req.URL.Path, "/manifests/"):
		r.counts.ManifestPuts++
	}
	if upload && r.failures > 0 {
		r.failures--
		r.counts.Failed++
		return true
	}
	return false
}

// Counts returns the requests served so far.
func (r *Registry) Counts() Counts {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts
}

// ResetCounts sets every counter to zero.
func (r *Registry) ResetCounts() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts = Counts{}
}

// FailUploads makes the next n blob upload requests fail with 503 Service
// Unavailable.
func (r *Registry) FailUploads(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures = n
}

// Mirrors returns the pull mirrors that map quay.io, docker.io, ghcr.io and
// registry.k8s.io to paths of this registry.
func (r *Registry) Mirrors() mirror.Mirrors {
	m := mirror.Mirrors{}
	for _, host := range []string{"quay.io", "docker.io", "index.docker.io", "ghcr.io", "registry.k8s.io"} {
		m[host] = mirror.Registry{Host: r.Host, Prefix: host}
	}
	// name normalizes docker.io to index.docker.io.
	m[name.DefaultRegistry] = mirror.Registry{Host: r.Host, Prefix: "docker.io"}
	return m
}

// Images generates one random image per reference: a base layer of
// baseSize bytes shared by all of them and one own layer of ownSize bytes.
func Images(t testing.TB, refs []string, baseSize, ownSize int64) map[string]v1.Image {
	t.Helper()
	base, err := random.Layer(baseSize, types.DockerLayer)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]v1.Image, len(refs))
	for _, ref := range refs {
		own, err := random.Layer(ownSize, types.DockerLayer)
		if err != nil {
			t.Fatal(err)
		}
		img, err := mutate.AppendLayers(empty.Image, base, own)
		if err != nil {
			t.Fatal(err)
		}
		out[ref] = img
	}
	return out
}

// Serve pushes imgs to r at the paths r.Mirrors maps their references to.
func (r *Registry) Serve(t testing.TB, imgs map[string]v1.Image) {
	t.Helper()
	m := r.Mirrors()
	for ref, img := range imgs {
		src, err := m.Source(ref)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(src, img); err != nil {
			t.Fatalf("failed to serve %s: %v", ref, err)
		}
	}
}

// Relocated is ref moved to dst, parsed.
func Relocated(t testing.TB, dst mirror.Registry, ref string) name.Reference {
	t.Helper()
	target, err := dst.Relocate(ref)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := name.ParseReference(target)
	if err != nil {
		t.Fatal(err)
	}
	return parsed
}

// discardLogger silences the registry's request log.
var discardLogger = log.New(io.Discard, "", 0)
