package metrics

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// namespace prefixes every metric name.
const namespace = "machine_controller"

// Metrics are the counters and histograms the controller updates.
type Metrics struct {
	// ProviderDuration observes provider calls by operation.
	ProviderDuration *prometheus.HistogramVec
	// ProviderErrors counts failed provider calls by operation and kind
	// (terminal or transient).
	ProviderErrors *prometheus.CounterVec
	// InfraRequests counts requests to infra clusters by verb, resource
	// and status code ("error" when no response came).
	InfraRequests *prometheus.CounterVec
}

// Register creates the metrics and registers them with reg. Metrics already
// registered there (a second controller in the same process) are reused.
func Register(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		ProviderDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "provider_operation_duration_seconds",
			Help:    "Duration of cloud provider operations (get, create, cleanup) in seconds.",
			Buckets: []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}, []string{"operation"}),
		ProviderErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "provider_operation_errors_total",
			Help: "Failed cloud provider operations by operation and kind (terminal, transient).",
		}, []string{"operation", "kind"}),
		InfraRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "infra_requests_total",
			Help: "Requests sent to infra clusters by verb, resource and status code.",
		}, []string{"verb", "resource", "code"}),
	}
	var err error
	if m.ProviderDuration, err = register(reg, m.ProviderDuration); err != nil {
		return nil, err
	}
	if m.ProviderErrors, err = register(reg, m.ProviderErrors); err != nil {
		return nil, err
	}
	if m.InfraRequests, err = register(reg, m.InfraRequests); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c, or returns the collector of the same description
// that is registered already.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	if err != nil {
		return c, fmt.Errorf("failed to register a metric: %w", err)
	}
	return c, nil
}
