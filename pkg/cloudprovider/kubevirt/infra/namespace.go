package infra

import "cmp"

// DefaultNamespace is the infra namespace when nothing else names one.
const DefaultNamespace = "default"

// ResolveNamespace is the rule that picks the infra namespace of a Machine's
// VM: the spec's auth.namespace, else the provider's namespace option, else
// the current-context namespace of the infra kubeconfig, else "default".
func ResolveNamespace(spec, option, kubeconfigContext string) string {
	return cmp.Or(spec, option, kubeconfigContext, DefaultNamespace)
}
