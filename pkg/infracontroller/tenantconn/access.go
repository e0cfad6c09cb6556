package tenantconn

import (
	"cmp"
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// Access is how the infra-controller reaches tenant clusters: per tenant
// namespace one connection (Clients: REST config, transport, rate limiter,
// uncached client, health) and one watch of our objects there (Watches),
// both following the kubeconfig Secret of the namespace. One Access serves
// every reconciler that talks to tenant clusters: each subscribes to the
// watched kinds it needs (Watches.Subscribe), and a rotated or removed
// kubeconfig replaces or drops the connection and the watch for all of
// them at once. Build it with NewAccess and add it to the manager once.
type Access struct {
	// Clients are the tenant connections.
	Clients Clients
	// Watches are the tenant watches, over the connections of Clients.
	Watches Watches
	// SecretName and SecretKey name the kubeconfig Secret in each tenant
	// namespace and its key.
	SecretName, SecretKey string
}

// Defaults of KubeconfigSecret.
const (
	DefaultKubeconfigSecretName = "tenant-kubeconfig"
	DefaultKubeconfigSecretKey  = "kubeconfig"
)

// KubeconfigSecret names the Secret in each tenant namespace that holds
// the tenant cluster's kubeconfig, and its key. Tenant namespaces without
// it are skipped by everything that reaches tenant clusters.
type KubeconfigSecret struct {
	Name, Key string
}

// OrDefault returns s with DefaultKubeconfigSecretName and
// DefaultKubeconfigSecretKey for what is empty.
func (s KubeconfigSecret) OrDefault() KubeconfigSecret {
	return KubeconfigSecret{Name: cmp.Or(s.Name, DefaultKubeconfigSecretName), Key: cmp.Or(s.Key, DefaultKubeconfigSecretKey)}
}

// AccessOptions configures NewAccess.
type AccessOptions struct {
	// Scheme holds the types of the tenant objects; client-go's when nil.
	Scheme *runtime.Scheme
	// Mapper maps every kind any reconciler reads or writes in tenant
	// clusters (see StaticMapper); without it each connection discovers
	// its cluster's API.
	Mapper meta.RESTMapper
	// Kinds are the kinds to watch, the union of what the reconcilers
	// subscribe to.
	Kinds []ctrlruntimeclient.Object
	// Wrap, when set, adjusts the REST config of every tenant connection.
	Wrap func(*rest.Config)
	// SecretName and SecretKey name the kubeconfig Secret in each tenant
	// namespace and its key.
	SecretName, SecretKey string
}

// NewAccess returns the tenant access of o.
func NewAccess(o AccessOptions) *Access {
	a := &Access{SecretName: o.SecretName, SecretKey: o.SecretKey}
	a.Clients = Clients{Scheme: o.Scheme, Wrap: o.Wrap, Mapper: o.Mapper}
	a.Watches = Watches{Scheme: o.Scheme, Kinds: o.Kinds, Mapper: o.Mapper, Clients: &a.Clients}
	return a
}

// Start runs the tenant watches until ctx ends (see Watches.Start) and
// meanwhile exports the health of the tenant connections as the gauge
// infra_controller_tenant_cluster_reachable{namespace}.
func (a *Access) Start(ctx context.Context) error {
	running.add(&a.Clients)
	defer running.remove(&a.Clients)
	return a.Watches.Start(ctx)
}

// Connect returns the client of the tenant cluster of namespace and makes
// sure that cluster is watched; it returns no client and no error when the
// namespace has no kubeconfig Secret. Without a usable kubeconfig the
// namespace's client and watch are dropped. While the tenant cluster is
// known to be unreachable (see Clients.Health) the error wraps
// remote.ErrUnreachable.
func (a *Access) Connect(ctx context.Context, reader ctrlruntimeclient.Reader, namespace string) (ctrlruntimeclient.Client, error) {
	kubeconfig, err := tenant.SecretData(ctx, reader, namespace, a.SecretName, a.SecretKey)
	if err != nil || kubeconfig == nil {
		a.Forget(namespace)
		return nil, err
	}
	cn, err := a.Clients.conn(namespace, kubeconfig)
	if err != nil {
		a.Watches.Stop(namespace)
		return nil, err
	}
	// Cheap when the connection is unchanged; the watch starts in the
	// background and never blocks the caller.
	if err := a.Watches.ensure(cn); err != nil {
		return nil, err
	}
	// A tenant cluster that did not answer a moment ago fails at once
	// rather than holding another worker until its timeout.
	if err := cn.Check("the tenant cluster of " + namespace); err != nil {
		return nil, err
	}
	return cn.client, nil
}

// Tenant returns the tenant namespace of req and the client of its tenant
// cluster, watched from now on; no client (and no error) when the namespace
// is not a live tenant namespace, whose client and watch are dropped, or
// has no kubeconfig Secret.
func (a *Access) Tenant(ctx context.Context, reader ctrlruntimeclient.Reader, tenants tenant.Matcher, req reconcile.Request) (string, ctrlruntimeclient.Client, error) {
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
