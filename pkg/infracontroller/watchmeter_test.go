package infracontroller_test

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// tenantMeter counts, per tenant API server (rest.Config.Host), the
// requests of the infra-controller's tenant clients and watches, and the
// WATCH streams open at any moment.
type tenantMeter struct {
	mu       sync.Mutex
	counters map[string]*envtest.RequestCounter
	open     map[string]int
	peak     map[string]int
}

func newTenantMeter() *tenantMeter {
	return &tenantMeter{counters: map[string]*envtest.RequestCounter{}, open: map[string]int{}, peak: map[string]int{}}
}

// wrap fits Options.WrapTenantConfig.
func (m *tenantMeter) wrap(cfg *rest.Config) {
	host := cfg.Host
	counter := m.counter(host)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return counter.Wrap(roundTrip(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if err != nil || resp.StatusCode != http.StatusOK || envtest.Classify(req).Verb != "WATCH" {
				return resp, err
			}
			m.streamOpened(host)
			resp.Body = &onClose{ReadCloser: resp.Body, done: func() { m.streamClosed(host) }}
			return resp, nil
		}))
	}
}

func (m *tenantMeter) counter(host string) *envtest.RequestCounter {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.counters[host]
	if !ok {
		c = envtest.NewRequestCounter()
		m.counters[host] = c
	}
	return c
}

func (m *tenantMeter) streamOpened(host string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.open[host]++
	m.peak[host] = max(m.peak[host], m.open[host])
}

func (m *tenantMeter) streamClosed(host string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.open[host]--
}

// streams returns the WATCH streams open now and the most ever open at
// once to host.
func (m *tenantMeter) streams(host string) (open, peak int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.open[host], m.peak[host]
}

// counts returns the requests to host since the last reset.
func (m *tenantMeter) counts(host string) map[envtest.Request]int {
	return m.counter(host).Counts()
}

// total returns the number of requests to all tenant API servers, WATCH
// requests left out when noWatch is set.
func (m *tenantMeter) total(noWatch bool) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, c := range m.counters {
		if noWatch {
			n += c.Total("DISCOVERY", "LIST", "GET", "POST", "PUT", "PATCH", "DELETE")
		} else {
			n += c.Total()
		}
	}
	return n
}

func (m *tenantMeter) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.counters {
		c.Reset()
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// onClose calls done once when the body is closed.
type onClose struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *onClose) Close() error {
	b.once.Do(b.done)
	return b.ReadCloser.Close()
}

// verbClass groups a request verb: DISCOVERY, LIST, WATCH, GET or write.
func verbClass(verb string) string {
	switch verb {
	case "DISCOVERY", "LIST", "WATCH", "GET":
		return verb
	}
	return "write"
}

// byClass sums counts by verbClass.
func byClass(counts map[envtest.Request]int) map[string]int {
	out := map[string]int{}
	for req, n := range counts {
		out[verbClass(req.Verb)] += n
	}
	return out
}

// format renders counts as "VERB resource×n, …", sorted.
func format(counts map[envtest.Request]int) string {
	var parts []string
	for req, n := range counts {
		parts = append(parts, fmt.Sprintf("%s×%d", req, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
