package tenant

import (
	"context"

	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
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

// Tenant returns the tenant namespace of req and the client of its tenant
// cluster, watched from now on; no client (and no error) when the namespace
// is not a live tenant namespace, whose client and watch are dropped, or
// has no kubeconfig Secret.
func (a *Access) Tenant(ctx context.Context, reader ctrlruntimeclient.Reader, tenants Matcher, req reconcile.Request) (string, ctrlruntimeclient.Client, error) {
	namespace, live, err := tenants.Live(ctx, reader, req)
	if err != nil || !live {
		if err == nil {
			a.Forget(req.Name)
		}
		return "", nil, err
	}
	c, err := a.Connect(ctx, reader, namespace)
	if err == nil && c == nil {
		log.FromContext(ctx).V(1).Info("no tenant kubeconfig; skipping the tenant cluster", "secret", a.SecretName)
	}
	return namespace, c, err
}

// Forget drops the client and the watch of namespace.
func (a *Access) Forget(namespace string) {
	a.Clients.Forget(namespace)
	a.Watches.Stop(namespace)
}
