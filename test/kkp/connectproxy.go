package kkp

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// ConnectProxy is an HTTP CONNECT proxy, as a seed's HTTPS_PROXY is, that
// reaches the hosts of ProxyHost, which resolve nowhere else, on loopback:
// a client that gets through to one used the proxy. Go never proxies
// loopback addresses, so a test names its servers through ProxyHost.
type ConnectProxy struct {
	URL     string
	tunnels atomic.Int64
	wg      sync.WaitGroup
}

// ProxyHost is the host name under which ConnectProxy reaches loopback.
const ProxyHost = "seed-proxied.test"

// StartConnectProxy starts a proxy until the test ends.
func StartConnectProxy(tb testing.TB) *ConnectProxy {
	tb.Helper()
	p := &ConnectProxy{}
	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	tb.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		p.wg.Wait()
	})
	p.URL = srv.URL
	return p
}

// Tunnels returns how many connections went through the proxy.
func (p *ConnectProxy) Tunnels() int64 { return p.tunnels.Load() }

func (p *ConnectProxy) serve(w http.ResponseWriter, r *http.Request) {
	host, port, err := net.SplitHostPort(r.Host)
	if r.Method != http.MethodConnect || err != nil || !strings.EqualFold(host, ProxyHost) {
		http.Error(w, "only CONNECT to "+ProxyHost, http.StatusForbidden)
		return
	}
	upstream, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	hijacker, ok := w.(http.Hijacker)
	if !ok {
		_ = upstream.Close()
		http.Error(w, "no hijacking", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
	conn, _, err := hijacker.Hijack()
	if err != nil {
		_ = upstream.Close()
		return
	}
	p.tunnels.Add(1)
	p.wg.Add(2)
	pipe := func(dst, src net.Conn) {
		defer p.wg.Done()
		_, _ = io.Copy(dst, src)
		_ = dst.Close()
		_ = src.Close()
	}
	go pipe(upstream, conn)
	go pipe(conn, upstream)
}
