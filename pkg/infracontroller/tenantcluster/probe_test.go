package tenantcluster

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
)

// secretToken is the bearer token of the test kubeconfigs; no error may
// carry it.
const secretToken = "s3cret-t0ken-of-the-tenant"

// versionServer serves /version as an API server does, or answer when
// set, and counts the requests with the test's bearer token.
func versionServer(tb testing.TB, answer string) (*httptest.Server, *atomic.Int32) {
	tb.Helper()
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/version" || req.Header.Get("Authorization") != "Bearer "+secretToken {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		asked.Add(1)
		if answer != "" {
			fmt.Fprint(w, answer)
			return
		}
		if err := json.NewEncoder(w).Encode(version.Info{GitVersion: "v1.36.3"}); err != nil {
			tb.Error(err)
		}
	}))
	tb.Cleanup(srv.Close)
	return srv, &asked
}

func TestProbesReuseOneClientPerKubeconfig(t *testing.T) {
	srv, asked := versionServer(t, "")
	cfg := &rest.Config{Host: srv.URL, BearerToken: secretToken}
	var p probes
	for range 3 {
		if err := p.probe(t.Context(), "a", []byte("kubeconfig one"), cfg); err != nil {
			t.Fatalf("probe failed: %v", err)
		}
	}
	if got := asked.Load(); got != 3 {
		t.Errorf("the server was asked %d times, want 3", got)
	}
	first := p.entries["a"].client
	if err := p.probe(t.Context(), "b", []byte("kubeconfig one"), cfg); err != nil {
		t.Fatalf("probe failed: %v", err)
	}
	if p.entries["a"].client != first || len(p.entries) != 2 {
		t.Fatalf("a probe of another TenantCluster changed the client of the first, or shares it: %d clients", len(p.entries))
	}
	if err := p.probe(t.Context(), "a", []byte("kubeconfig two"), cfg); err != nil {
		t.Fatalf("probe failed: %v", err)
	}
	if p.entries["a"].client == first {
		t.Error("a changed kubeconfig kept the client of the old one")
	}
	if len(p.entries) != 2 {
		t.Errorf("%d clients after a changed kubeconfig, want 2", len(p.entries))
	}
	p.forget("a")
	p.forget("b")
	if len(p.entries) != 0 {
		t.Errorf("%d clients after forgetting both TenantClusters, want none", len(p.entries))
	}
}

func TestProbeErrorsDoNotCarryTheKubeconfig(t *testing.T) {
	notVersion, _ := versionServer(t, "<html>a proxy's login page</html>")
	closed, _ := versionServer(t, "")
	closed.Close()
	for _, tc := range []struct {
		name, host, wantErr string
	}{
		{name: "an answer that is no version", host: notVersion.URL, wantErr: "is not a version"},
		{name: "a server that is gone", host: closed.URL, wantErr: "connect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p probes
			err := p.probe(t.Context(), "a", []byte("kubeconfig"), &rest.Config{Host: tc.host, BearerToken: secretToken})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("probe: %v, want an error with %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), secretToken) {
				t.Errorf("the error carries the bearer token: %v", err)
			}
		})
	}
}
