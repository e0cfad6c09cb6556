package envtest

import (
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Request is the kind of an API request as RequestCounter sees it.
type Request struct {
	// Verb is GET, LIST, WATCH, POST, PUT, PATCH or DELETE; "DISCOVERY"
	// for /api, /apis and their group/version documents.
	Verb string
	// Resource is the resource path without the namespace and name, e.g.
	// "kubevirt.io/v1/virtualmachines" or "v1/secrets"; "" for discovery.
	Resource string
}

// String renders the request as "VERB resource".
func (r Request) String() string {
	return strings.TrimSpace(r.Verb + " " + r.Resource)
}

// RequestCounter counts the requests that pass through the transports it
// wraps. It is safe for concurrent use.
type RequestCounter struct {
	mu     sync.Mutex
	counts map[Request]int
}

// NewRequestCounter returns an empty counter.
func NewRequestCounter() *RequestCounter {
	return &RequestCounter{counts: map[Request]int{}}
}

// Wrap returns rt counting every request; it fits rest.Config.WrapTransport.
func (c *RequestCounter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		c.mu.Lock()
		c.counts[Classify(req)]++
		c.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

// Reset forgets all counts.
func (c *RequestCounter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts = map[Request]int{}
}

// Counts returns a copy of the counts.
func (c *RequestCounter) Counts() map[Request]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[Request]int, len(c.counts))
	for k, v := range c.counts {
		out[k] = v
	}
	return out
}

// Total returns the number of requests whose verb is one of verbs, or of
// all requests when verbs is empty.
func (c *RequestCounter) Total(verbs ...string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k, v := range c.counts {
		if len(verbs) == 0 || slices.Contains(verbs, k.Verb) {
			n += v
		}
	}
	return n
}

// Classify names the verb and resource of an API request.
func Classify(req *http.Request) Request {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var gv []string
	switch {
	case len(parts) >= 1 && parts[0] == "api":
		gv, parts = parts[1:min(2, len(parts))], parts[min(2, len(parts)):]
	case len(parts) >= 1 && parts[0] == "apis":
		gv, parts = parts[1:min(3, len(parts))], parts[min(3, len(parts)):]
	default:
		return Request{Verb: req.Method, Resource: req.URL.Path}
	}
	if len(parts) == 0 {
		return Request{Verb: "DISCOVERY"}
	}
	if parts[0] == "namespaces" && len(parts) >= 3 {
		parts = parts[2:]
	}
	resource := strings.Join(append(gv, parts[0]), "/")
	if len(parts) >= 3 {
		resource += "/" + parts[2] // subresource
	}
	verb := req.Method
	if req.Method == http.MethodGet && len(parts) == 1 {
		verb = "LIST"
		if req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1" {
			verb = "WATCH"
		}
	}
	return Request{Verb: verb, Resource: resource}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
