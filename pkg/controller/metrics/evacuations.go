package metrics

import "github.com/prometheus/client_golang/prometheus"

// RegisterEvacuations registers the counter of evacuations, the ways the
// Machines of VMIs on draining infra nodes took, with reg, or returns the
// one registered there already. Its labels are the policy in effect
// (restart, liveMigrate, replace) and the outcome (restarted, migrating,
// replaced); a policy with another outcome is a fallback.
func RegisterEvacuations(reg prometheus.Registerer) (*prometheus.CounterVec, error) {
	return register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "evacuations_total",
		Help: "Evacuations of VMIs off draining infra nodes by policy (restart, liveMigrate, replace) and outcome (restarted, migrating, replaced).",
	}, []string{"policy", "outcome"}))
}
