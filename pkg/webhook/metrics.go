package webhook

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// infraUnchecked counts admissions decided without the infra cluster's
// facts, by reason: "timeout" (no answer within the budget), "paused" (the
// infra cluster did not answer recently and was not asked), "error" (it
// answered with an error, e.g. refused the connection).
var infraUnchecked = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "machine_controller_webhook_infra_unchecked_total",
	Help: "Admission requests decided on the providerSpec's syntax alone because the infra cluster did not answer in time or failed.",
}, []string{"reason"})

// throttled counts reviews turned away because MaxInFlight admissions
// were running for longer than the admission wait.
var throttled = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "machine_controller_webhook_admissions_throttled_total",
	Help: "AdmissionReviews answered with 429 (too many concurrent admissions) without being decoded.",
})

// registerMetrics registers the webhook's metrics; registering twice (two
// servers in one process) is no error.
func registerMetrics(r prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{infraUnchecked, throttled} {
		err := r.Register(c)
		if are := (prometheus.AlreadyRegisteredError{}); err != nil && !errors.As(err, &are) {
			return err
		}
	}
	return nil
}

// uncheckedReason names why err left the infra facts unchecked.
func uncheckedReason(err error) string {
	switch {
	case errors.Is(err, errSilent):
		return "paused"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return "error"
}
