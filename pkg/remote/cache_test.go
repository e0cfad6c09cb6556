package remote

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// TestBuildsSendNothing: the mapper, a client and a cache of a connection
// are built without a request, and the mapper is built once and shared.
func TestBuildsSendNothing(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { requests.Add(1) }))
	t.Cleanup(srv.Close)
	c, err := Dial(kubeconfigOf(t, srv.URL), Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	m1, err := c.Mapper()
	if err != nil {
		t.Fatal(err)
	}
	m2, err := c.Mapper()
	if err != nil {
		t.Fatal(err)
	}
	if m1 != m2 {
		t.Error("Mapper built a second mapper")
	}
	if _, err := c.NewClient(nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.NewCache(CacheOptions{Namespaces: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("building the mapper, a client and a cache sent %d requests, want 0", n)
	}
}

// TestLastWatchError: a list a cache's informer cannot make is kept as the
// connection's last watch error, naming the kind and quoting no
// credential.
func TestLastWatchError(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"configmaps is forbidden"}`))
	}))
	t.Cleanup(srv.Close)
	c, err := Dial(kubeconfigOf(t, srv.URL), Options{QPS: 10, Burst: 10, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	ca, err := c.NewCache(CacheOptions{Mapper: mapper, Namespaces: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.LastWatchError() != nil {
		t.Fatalf("a new connection has a watch error: %v", c.LastWatchError())
	}
	go func() { _ = ca.Start(t.Context()) }()
	if _, err := ca.GetInformer(t.Context(), &corev1.ConfigMap{}, cache.BlockUntilSynced(false)); err != nil {
		t.Fatal(err)
	}
	poll.UntilTrue(t, 10*time.Second, "a watch error", func() (bool, error) { return c.LastWatchError() != nil, nil })
	got := c.LastWatchError().Error()
	if !strings.Contains(got, "ConfigMap") || !strings.Contains(got, "forbidden") || strings.Contains(got, token) {
		t.Errorf("LastWatchError = %q, want the kind and the refusal, without the token", got)
	}
}
