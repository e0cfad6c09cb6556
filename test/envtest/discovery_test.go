package envtest

import (
	"k8s.io/client-go/discovery"
)

func discoveryFor(env *Env) (*discovery.DiscoveryClient, error) {
	return discovery.NewDiscoveryClientForConfig(env.Config)
}
