package e2e

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

// proxy is a TCP proxy on 127.0.0.1 in front of an API server: the tests
// cut the controller's connection to the infra cluster with it, since
// envtest cannot restart an API server on the same port.
type proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// startProxy forwards a local port to target (host:port) until the test
// ends.
func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.serve)
	t.Cleanup(func() {
		_ = ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

// serve accepts connections; while down it closes them at once.
func (p *proxy) serve() {
	for {
		conn, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			_ = conn.Close()
			continue
		}
		p.wg.Go(func() { p.forward(conn) })
	}
}

// forward copies between conn and a new connection to the target.
func (p *proxy) forward(conn net.Conn) {
	upstream, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = conn.Close()
		return
	}
	if !p.track(conn, upstream) {
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(upstream, conn)
	go pipe(conn, upstream)
	<-done
	_ = conn.Close()
	_ = upstream.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, conn)
	delete(p.conns, upstream)
	p.mu.Unlock()
}

// track registers both ends of a forwarded connection, or closes them when
// the proxy went down meanwhile.
func (p *proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

// cut closes every forwarded connection and refuses new ones until restore.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		_ = c.Close()
	}
}

// restore forwards new connections again.
func (p *proxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// throughProxy returns the kubeconfig with every cluster's server replaced
// by the proxy, and the address the proxy must forward to.
func throughProxy(kubeconfig []byte, listen func(target string) string) ([]byte, error) {
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("failed to load the kubeconfig: %w", err)
	}
	if len(cfg.Clusters) != 1 {
		return nil, errors.New("the kubeconfig must have exactly one cluster")
	}
	for _, c := range cfg.Clusters {
		u, err := url.Parse(c.Server)
		if err != nil {
			return nil, fmt.Errorf("failed to parse the server URL: %w", err)
		}
		u.Host = listen(u.Host)
		c.Server = u.String()
	}
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to write the kubeconfig: %w", err)
	}
	return out, nil
}
