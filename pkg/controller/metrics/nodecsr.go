package metrics

import "github.com/prometheus/client_golang/prometheus"

// RegisterNodeCSRs registers the counter of the node CSR approver's
// decisions with reg, or returns the one registered there already. Its
// labels are the outcome (approved, pending, denied) and the reason (the
// constants of package nodecsr); a request counts once per outcome and
// reason it gets, not once per look at it.
func RegisterNodeCSRs(reg prometheus.Registerer) (*prometheus.CounterVec, error) {
	return register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "node_csr_decisions_total",
		Help: "Decisions of the node CSR approver on kubelet serving CertificateSigningRequests by outcome (approved, pending, denied) and reason.",
	}, []string{"outcome", "reason"}))
}
