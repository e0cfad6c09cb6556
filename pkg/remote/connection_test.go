package remote

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"
)

const token = "s3cret-t0ken"

func kubeconfigOf(t *testing.T, server string) []byte {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	kc.AuthInfos["c"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "c", Namespace: "ns"}
	kc.CurrentContext = "c"
	out, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDial(t *testing.T) {
	data := kubeconfigOf(t, "https://127.0.0.1:1")
	c, err := Dial(data, Options{UserAgent: "test", QPS: 5, Burst: 10, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if c.Namespace != "ns" || c.Config.UserAgent != "test" || c.Config.RateLimiter == nil || c.HTTPClient.Timeout != time.Second || c.StreamClient.Timeout != 0 {
		t.Errorf("connection = namespace %q, user agent %q, limiter %v, timeouts %s/%s", c.Namespace, c.Config.UserAgent, c.Config.RateLimiter, c.HTTPClient.Timeout, c.StreamClient.Timeout)
	}
	if c.HTTPClient.Transport != c.StreamClient.Transport {
		t.Error("requests and streams do not share one transport")
	}
	if !c.Of(data) || c.Of(append(data, '\n')) {
		t.Error("Of does not tell the connection's kubeconfig from another")
	}
	if _, err := Dial([]byte("x: ["), Options{}); !errors.Is(err, kubeconfig.ErrInvalid) || strings.Contains(err.Error(), "x: [") {
		t.Errorf("Dial of a broken kubeconfig: %v, want kubeconfig.ErrInvalid without its content", err)
	}
}

// TestHealth follows one connection through an outage: a refused request
// makes it unreachable, Check fails at once within the window and lets the
// next attempt through after it, and an answer makes it reachable again.
// A request its caller cancelled says nothing about the cluster.
func TestHealth(t *testing.T) {
	unreachableWindow = 200 * time.Millisecond
	t.Cleanup(func() { unreachableWindow = 10 * time.Second })
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(srv.Close)
	closed := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	closed.Close()

	c, err := Dial(kubeconfigOf(t, closed.URL), Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if h := c.Health(); !h.Reachable || c.Check("x") != nil {
		t.Fatalf("a new connection is %+v, want reachable", h)
	}
	get := func(c *Connection, url string) {
		if resp, err := c.HTTPClient.Get(url); err == nil {
			resp.Body.Close()
		}
	}
	get(c, closed.URL)
	h := c.Health()
	if h.Reachable || h.Since.IsZero() || !strings.Contains(h.Error, "connect") || strings.Contains(h.Error, token) {
		t.Errorf("after a refused request: %+v, want unreachable with the connection error and no token", h)
	}
	if err := c.Check("the cluster x"); !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "the cluster x has not answered since") {
		t.Errorf("Check within the window: %v", err)
	}
	time.Sleep(unreachableWindow)
	if err := c.Check("x"); err != nil {
		t.Errorf("Check after the window: %v, want the next attempt let through", err)
	}

	ok, err := Dial(kubeconfigOf(t, srv.URL), Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	get(ok, closed.URL) // the same transport, a refused request
	get(ok, srv.URL)
	if h := ok.Health(); !h.Reachable {
		t.Errorf("after an answer: %+v, want reachable", h)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, closed.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := ok.HTTPClient.Do(req); err == nil {
		resp.Body.Close()
	}
	if h := ok.Health(); !h.Reachable {
		t.Errorf("after a request its caller cancelled: %+v, want still reachable", h)
	}
}
