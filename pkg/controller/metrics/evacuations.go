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

// RegisterInfraWatches registers the gauge of watched infra namespaces,
// one per (infra kubeconfig, namespace) pair whose VirtualMachines,
// VirtualMachineInstances and migrations reach the Machines as events,
// with reg, or returns the one registered there already. Controllers in
// one process add and subtract their own.
func RegisterInfraWatches(reg prometheus.Registerer) (prometheus.Gauge, error) {
	return register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "infra_watches",
		Help: "Infra namespaces (per infra kubeconfig) whose VirtualMachines, VirtualMachineInstances and migrations are watched.",
	}))
}
