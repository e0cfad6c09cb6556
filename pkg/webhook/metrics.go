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

// registerMetrics registers the webhook's metrics; registering twice (two
// servers in one process) is no error.
func registerMetrics(r prometheus.Registerer) error {
	err := r.Register(infraUnchecked)
	if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) {
		return nil
	}
	return err
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
