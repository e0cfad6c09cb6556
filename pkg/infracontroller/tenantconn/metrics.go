package tenantconn

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// reachableDesc describes the health of every tenant connection.
var reachableDesc = prometheus.NewDesc("infra_controller_tenant_cluster_reachable",
	"1 when the last request to the tenant cluster of the namespace got an answer, 0 when it found the cluster unreachable.",
	[]string{"namespace"}, nil)

// running are the connections of the running Accesses, exported on the
// controller-runtime metrics registry (the manager's /metrics).
var running = &connectionsCollector{set: map[*Clients]bool{}}

func init() {
	ctrlmetrics.Registry.MustRegister(running)
}

// connectionsCollector collects the health of the connections of every
// running Access.
type connectionsCollector struct {
	mu  sync.Mutex
	set map[*Clients]bool
}

// add exports the health of c's connections until remove.
func (cc *connectionsCollector) add(c *Clients) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.set[c] = true
}

func (cc *connectionsCollector) remove(c *Clients) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	delete(cc.set, c)
}

// Describe implements prometheus.Collector.
func (cc *connectionsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- reachableDesc
}

// Collect implements prometheus.Collector: one sample per tenant
// connection.
func (cc *connectionsCollector) Collect(ch chan<- prometheus.Metric) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for c := range cc.set {
		c.collect(ch)
	}
}

// collect sends one sample per connection of c.
func (c *Clients) collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for namespace, e := range c.entries {
		v := 0.0
		if e.Health().Reachable {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(reachableDesc, prometheus.GaugeValue, v, namespace)
	}
}
