package registrytest

import (
	"net/http"
	"strings"
)

// WithRepositoryBlobs makes blobs belong to repositories, as in
// distribution-based registries: a blob is found (HEAD, GET) only in a
// repository it was uploaded or mounted to, and a mount request
// (POST .../blobs/uploads/?mount=DIGEST&from=REPO) of a blob REPO holds
// succeeds. go-containerregistry's registry keeps one blob store for all
// repositories, under which a blob uploaded once is found everywhere, and
// ignores mount requests.
func WithRepositoryBlobs() Option {
	return func(c *config) { c.repositoryBlobs = true }
}

// serve answers req with inner, keeping each repository's blobs apart
// under WithRepositoryBlobs.
func (r *Registry) serve(inner http.Handler, w http.ResponseWriter, req *http.Request) {
	if r.blobs == nil {
		inner.ServeHTTP(w, req)
		return
	}
	r.mu.Lock()
	hidden := r.blobs.hidden(req)
	mounted := !hidden && r.blobs.mount(w, req)
	if mounted {
		r.counts.BlobUploads--
		r.counts.Mounts++
	}
	r.mu.Unlock()
	if hidden {
		http.Error(w, "blob unknown to this repository", http.StatusNotFound)
		return
	}
	if mounted {
		return
	}
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	inner.ServeHTTP(rec, req)
	r.mu.Lock()
	r.blobs.record(req, rec.status)
	r.mu.Unlock()
}

// repoBlobs records which repositories hold which blobs.
type repoBlobs map[string]map[string]bool

// blobPath splits a blob request's path /v2/REPO/blobs/REST into REPO and
// REST; ok is false for any other path.
func blobPath(p string) (repo, rest string, ok bool) {
	p, found := strings.CutPrefix(p, "/v2/")
	if !found {
		return "", "", false
	}
	i := strings.LastIndex(p, "/blobs/")
	if i < 0 {
		return "", "", false
	}
	return p[:i], p[i+len("/blobs/"):], true
}

// hidden reports whether req reads a blob its repository does not hold.
func (rb repoBlobs) hidden(req *http.Request) bool {
	if req.Method != http.MethodHead && req.Method != http.MethodGet {
		return false
	}
	repo, digest, ok := blobPath(req.URL.Path)
	if !ok || strings.HasPrefix(digest, "uploads") {
		return false
	}
	return !rb[repo][digest]
}

// record notes the blob that a successful upload put into its repository.
func (rb repoBlobs) record(req *http.Request, status int) {
	repo, rest, ok := blobPath(req.URL.Path)
	digest := req.URL.Query().Get("digest")
	if !ok || status != http.StatusCreated || !strings.HasPrefix(rest, "uploads") || digest == "" {
		return
	}
	rb.add(repo, digest)
}

func (rb repoBlobs) add(repo, digest string) {
	if rb[repo] == nil {
		rb[repo] = map[string]bool{}
	}
	rb[repo][digest] = true
}

// mount answers a mount request of a blob its source repository holds: the
// blob is added to the request's repository. It reports whether it
// answered; any other request, and a mount of a blob the source lacks, is
// left to the registry, which starts an upload instead.
func (rb repoBlobs) mount(w http.ResponseWriter, req *http.Request) bool {
	if !isMount(req) {
		return false
	}
	repo, _, ok := blobPath(req.URL.Path)
	q := req.URL.Query()
	digest, from := q.Get("mount"), q.Get("from")
	if !ok || !rb[from][digest] {
		return false
	}
	rb.add(repo, digest)
	w.Header().Set("Location", "/v2/"+repo+"/blobs/"+digest)
	w.Header().Set("Docker-Content-Digest", digest)
	w.WriteHeader(http.StatusCreated)
	return true
}

// isMount reports whether req asks to mount a blob from another repository.
func isMount(req *http.Request) bool {
	return req.Method == http.MethodPost && req.URL.Query().Get("mount") != ""
}

// statusRecorder keeps the status code a handler answered with.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}
