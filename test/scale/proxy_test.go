package scale

import (
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// countingProxy is a reverse proxy in front of an API server that counts
// every request by verb and resource (envtest.Classify), so the
// controller's user-cluster requests can be told apart by what they touch
// (Machine, Machine status, Node, Event, Secret), which its client-go
// metrics do not say. The controller reaches it over plain HTTP without
// credentials; the proxy forwards with the identity it is given (the API
// server's admin, or Kubermatic's machine-controller).
type countingProxy struct {
	counter *envtest.RequestCounter
	server  *httptest.Server
}

// startProxy starts a counting proxy in front of the API server of cfg,
// forwarding with cfg's identity, until the test ends.
func startProxy(tb testing.TB, cfg *rest.Config) *countingProxy {
	tb.Helper()
	target, err := url.Parse(cfg.Host)
	if err != nil {
		tb.Fatal(err)
	}
	if target.Scheme == "" {
		target = &url.URL{Scheme: "https", Host: cfg.Host}
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	counter := envtest.NewRequestCounter()
	proxy := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: counter.Wrap(transport),
		// Watches stream: pass every event on at once.
		FlushInterval: -1,
	}
	p := &countingProxy{counter: counter, server: httptest.NewServer(proxy)}
	tb.Cleanup(p.server.Close)
	return p
}

// host is the proxy's host:port, as client-go labels its requests.
func (p *countingProxy) host() string {
	return strings.TrimPrefix(p.server.URL, "http://")
}

// kubeconfig reaches the API server through the proxy.
func (p *countingProxy) kubeconfig(tb testing.TB) []byte {
	tb.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["proxy"] = &clientcmdapi.Cluster{Server: p.server.URL}
	kc.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	kc.CurrentContext = "proxy"
	out, err := clientcmd.Write(*kc)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// byResource returns the counted requests by verb and resource, e.g.
// "PATCH cluster.k8s.io/v1alpha1/machines/status".
func (p *countingProxy) byResource() map[string]float64 {
	out := map[string]float64{}
	for req, n := range p.counter.Counts() {
		out[req.String()] += float64(n)
	}
	return out
}
