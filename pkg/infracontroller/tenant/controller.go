package tenant

import (
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/queue"
)

// NamespaceController starts the builder of a controller that reconciles
// tenant namespaces, as every namespace controller of the infra-controller
// does: named, for the Namespaces the matcher passes (requests keyed by
// namespace name, see Request), with the project's rate limiter and workers
// reconciles at once (1 when workers is 0). The caller adds its watches
// and completes it.
func (m Matcher) NamespaceController(mgr ctrl.Manager, name string, workers int) *builder.Builder {
	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(&corev1.Namespace{}, builder.WithPredicates(m.NamespacePredicate())).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers, RateLimiter: queue.RateLimiter(0)})
}
