package tenantconn

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/remote"
)

// secretToken is the bearer token of the probe tests' kubeconfigs; no
// error may carry it.
const secretToken = "s3cret-t0ken-of-the-tenant"

// versionServer serves /version as an API server does, or answer when
// set, and counts the requests with the test's bearer token.
func versionServer(t *testing.T, answer string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var asked atomic.Int32
	// TLS: clientcmd sends no bearer token to a plain-HTTP server.
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
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
			t.Error(err)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &asked
}

func TestProbeReusesTheConnectionOfTheKubeconfig(t *testing.T) {
	srv, asked := versionServer(t, "")
	one, two := kubeconfigWithToken(t, srv.URL, secretToken), kubeconfigWithToken(t, srv.URL+"/", secretToken)
	var c Clients
	for range 3 {
		must(t, probeErr(c.Probe(t.Context(), "cluster-a", one)))
	}
	if got := asked.Load(); got != 3 {
		t.Errorf("the server was asked %d times, want 3", got)
	}
	first := c.entries["cluster-a"]
	cl, err := c.Get("cluster-a", one)
	must(t, err)
	if cl != first.client {
		t.Error("the probe and the client of one kubeconfig use different connections")
	}
	must(t, probeErr(c.Probe(t.Context(), "cluster-b", one)))
	if c.entries["cluster-a"] != first || c.Len() != 2 {
		t.Fatalf("a probe of another namespace changed the first connection, or shares it: %d connections", c.Len())
	}
	must(t, probeErr(c.Probe(t.Context(), "cluster-a", two)))
	if c.entries["cluster-a"] == first || c.Len() != 2 {
		t.Errorf("a rotated kubeconfig kept the old connection, or added one: %d connections", c.Len())
	}
	c.Forget("cluster-a")
	c.Forget("cluster-b")
	if c.Len() != 0 {
		t.Errorf("%d connections after forgetting both namespaces, want none", c.Len())
	}
}

func TestProbeErrorsDoNotCarryTheKubeconfig(t *testing.T) {
	notVersion, _ := versionServer(t, "<html>a proxy's login page</html>")
	closed, _ := versionServer(t, "")
	closed.Close()
	for _, tc := range []struct {
		name, host, wantErr string
		wantReachable       bool
	}{
		{name: "an answer that is no version", host: notVersion.URL, wantErr: "is not a version", wantReachable: true},
		{name: "a server that is gone", host: closed.URL, wantErr: "connect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c Clients
			host, err := c.Probe(t.Context(), "cluster-a", kubeconfigWithToken(t, tc.host, secretToken))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Probe: %v, want an error with %q", err, tc.wantErr)
			}
			if host != tc.host {
				t.Errorf("Probe named host %q, want %q", host, tc.host)
			}
			h, _ := c.Health("cluster-a")
			if h.Reachable != tc.wantReachable {
				t.Errorf("health after the probe = %+v, want reachable %t", h, tc.wantReachable)
			}
			for _, s := range []string{err.Error(), h.Error} {
				if strings.Contains(s, secretToken) {
					t.Errorf("an error carries the bearer token: %s", s)
				}
			}
		})
	}
}

// TestUnreachableFailsFastForEveryReconciler shows the one health state of
// a tenant connection: after the probe found the tenant cluster
// unreachable, every caller of Connect fails at once, without a request,
// and an answer to the next probe makes the cluster reachable for all of
// them again. (The retry window itself is package remote's.)
func TestUnreachableFailsFastForEveryReconciler(t *testing.T) {
	srv, asked := versionServer(t, "")
	addr := srv.URL
	srv.Listener.Close() // refuse connections until restarted below
	kc := kubeconfigWithToken(t, addr, secretToken)
	reader := fake.NewClientBuilder().WithObjects(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-a", Name: "tenant-kubeconfig"}, Data: map[string][]byte{"kubeconfig": kc}}).Build()
	var sent atomic.Int32
	a := NewAccess(AccessOptions{SecretName: "tenant-kubeconfig", SecretKey: "kubeconfig",
		Kinds: []ctrlruntimeclient.Object{&storagev1.StorageClass{}},
		Wrap: func(cfg *rest.Config) {
			cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
				return roundTripperFunc(func(req *http.Request) (*http.Response, error) { sent.Add(1); return rt.RoundTrip(req) })
			})
		}})

	if _, err := a.Clients.Probe(t.Context(), "cluster-a", kc); err == nil {
		t.Fatal("the probe of a closed port succeeded")
	}
	before := sent.Load()
	for range 3 {
		_, err := a.Connect(t.Context(), reader, "cluster-a")
		if !errors.Is(err, remote.ErrUnreachable) || !strings.Contains(err.Error(), "the tenant cluster of cluster-a") {
			t.Fatalf("Connect right after a failed probe: %v, want remote.ErrUnreachable naming the namespace", err)
		}
	}
	if n := sent.Load() - before; n != 0 {
		t.Errorf("%d requests while the tenant cluster was known unreachable, want 0", n)
	}
	if h, _ := a.Clients.Health("cluster-a"); h.Reachable || h.Since.IsZero() || !strings.Contains(h.Error, "connect") {
		t.Errorf("health = %+v, want unreachable since the probe, with the connection error", h)
	}
	running.add(&a.Clients)
	t.Cleanup(func() { running.remove(&a.Clients) })
	wantReachable(t, 0)
	restarted := httptest.NewUnstartedServer(srv.Config.Handler)
	restarted.Listener.Close()
	restarted.Listener = listen(t, addr)
	restarted.StartTLS()
	t.Cleanup(restarted.Close)
	must(t, probeErr(a.Clients.Probe(t.Context(), "cluster-a", kc)))
	if h, _ := a.Clients.Health("cluster-a"); !h.Reachable {
		t.Errorf("health after an answer = %+v, want reachable", h)
	}
	if c, err := a.Connect(t.Context(), reader, "cluster-a"); err != nil || c == nil {
		t.Errorf("Connect after an answer: %v", err)
	}
	wantReachable(t, 1)
	if got := asked.Load(); got != 1 {
		t.Errorf("the tenant cluster answered %d probes, want 1", got)
	}
}

// wantReachable checks the gauge of the connection of cluster-a.
func wantReachable(t *testing.T, want float64) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	must(t, reg.Register(running))
	families, err := reg.Gather()
	must(t, err)
	var got []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			got = append(got, fmt.Sprintf("%s%v %v", f.GetName(), m.GetLabel(), m.GetGauge().GetValue()))
		}
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], "infra_controller_tenant_cluster_reachable") ||
		!strings.Contains(got[0], `value:"cluster-a"`) || !strings.HasSuffix(got[0], fmt.Sprintf(" %v", want)) {
		t.Errorf("metrics = %q, want infra_controller_tenant_cluster_reachable{namespace=cluster-a} %v", got, want)
	}
}

// listen listens on the host and port of the URL addr again.
func listen(t *testing.T, addr string) net.Listener {
	t.Helper()
	u, err := url.Parse(addr)
	must(t, err)
	l, err := net.Listen("tcp", u.Host)
	must(t, err)
	return l
}

// probeErr returns the error of Clients.Probe.
func probeErr(_ string, err error) error { return err }
