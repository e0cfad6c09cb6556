package metrics

import (
	"net/http"
	"strconv"
	"strings"
)

// WrapTransport returns rt counting every request in InfraRequests; it
// fits rest.Config.WrapTransport and infra.Options.WrapTransport.
func (m *Metrics) WrapTransport(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		code := "error"
		if err == nil {
			code = strconv.Itoa(resp.StatusCode)
		}
		verb, resource := requestInfo(req)
		m.InfraRequests.WithLabelValues(verb, resource, code).Inc()
		return resp, err
	})
}

// roundTripperFunc is a function that is an http.RoundTripper.
type roundTripperFunc func(*http.Request) (*http.Response, error)

// RoundTrip implements http.RoundTripper.
func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// requestInfo returns the Kubernetes verb and resource of an API request:
// resource[.group][/subresource], or "other" for paths outside the
// resource API (discovery, version).
func requestInfo(req *http.Request) (string, string) {
	resource, named := resourceOf(req.URL.Path)
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case named || resource == "other":
			return "get", resource
		case req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1":
			return "watch", resource
		default:
			return "list", resource
		}
	case http.MethodPost:
		return "create", resource
	case http.MethodPut:
		return "update", resource
	case http.MethodPatch:
		return "patch", resource
	case http.MethodDelete:
		if named {
			return "delete", resource
		}
		return "deletecollection", resource
	default:
		return strings.ToLower(req.Method), resource
	}
}

// resourceOf parses /api/v1/[namespaces/<ns>/]<resource>[/<name>[/<sub>]]
// and /apis/<group>/<version>/... paths. It reports whether the path names
// one object.
func resourceOf(path string) (string, bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	group := ""
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		group, parts = parts[1], parts[3:]
	default:
		return "other", false
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	resource := parts[0]
	if group != "" {
		resource += "." + group
	}
	if len(parts) >= 3 {
		resource += "/" + parts[2]
	}
	return resource, len(parts) >= 2
}
