package tenant

import (
	"context"

	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// Access is how one controller reaches tenant clusters: per tenant
// namespace an uncached client for its reads and writes, and a watch of our
// objects there, both following the kubeconfig Secret of the namespace.
// Add &Watches to the manager and Watches.Source to the controller.
type Access struct {
	// Clients are the tenant clients.
	Clients Clients
	// Watches are the tenant watches.
	Watches Watches
	// SecretName and SecretKey name the kubeconfig Secret in each tenant
	// namespace and its key.
	SecretName, SecretKey string
}

// Connect returns the client of the tenant cluster of namespace and makes
// sure that cluster is watched; it returns no client and no error when the
// namespace has no kubeconfig Secret. Without a usable kubeconfig the
// namespace's client and watch are dropped.
func (a *Access) Connect(ctx context.Context, reader ctrlruntimeclient.Reader, namespace string) (ctrlruntimeclient.Client, error) {
	kubeconfig, err := SecretData(ctx, reader, namespace, a.SecretName, a.SecretKey)
	if err != nil || kubeconfig == nil {
		a.Forget(namespace)
		return nil, err
	}
	c, err := a.Clients.Get(namespace, kubeconfig)
	if err != nil {
		a.Watches.Stop(namespace)
		return nil, err
	}
	// Cheap when the kubeconfig is unchanged; the watch starts in the
	// background and never blocks the caller.
	if err := a.Watches.Ensure(namespace, kubeconfig); err != nil {
		return nil, err
	}
	return c, nil
}

// Forget drops the client and the watch of namespace.
func (a *Access) Forget(namespace string) {
	a.Clients.Forget(namespace)
	a.Watches.Stop(namespace)
}
