package infracontroller

// Defaults of the client-side request limit of the infra-controller's
// client of the infra API server (--kube-api-qps, --kube-api-burst).
//
// The infra-controller's writes come in waves: a preset change, a changed
// default NetworkPolicy or a new infra StorageClass costs one write per
// tenant namespace at once. At client-go's usual 50 QPS a wave over 500
// namespaces waited 8 s on the limiter alone. The burst takes such a wave
// whole and the rate refills it within two seconds; the API server protects
// itself with API Priority and Fairness, which queues and rejects the
// requests of one client by its flow schema's share, so the client-side
// limit is only a guard against a runaway loop.
const (
	DefaultKubeAPIQPS   = 500
	DefaultKubeAPIBurst = 1000
)
