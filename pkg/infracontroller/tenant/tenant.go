package tenant

import (
	"context"
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// DefaultPrefix is the name prefix of tenant namespaces in a Kubermatic
// layout.
const DefaultPrefix = "cluster-"

// Matcher recognises tenant namespaces by their name prefix.
type Matcher struct {
	// Prefix is the name prefix of tenant namespaces. It must not be
	// empty.
	Prefix string
}

// Validate reports a matcher that would match every namespace.
func (m Matcher) Validate() error {
	if m.Prefix == "" {
		return errors.New("the tenant namespace prefix must not be empty")
	}
	return nil
}

// IsTenant reports whether the namespace name belongs to a tenant cluster.
func (m Matcher) IsTenant(namespace string) bool {
	return m.Prefix != "" && strings.HasPrefix(namespace, m.Prefix) && len(namespace) > len(m.Prefix)
}

// Request returns the reconcile request of a tenant namespace; the
// controllers of this module key their work by namespace name.
func Request(namespace string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Name: namespace}}
}

// NamespacePredicate passes events of tenant Namespace objects only.
func (m Matcher) NamespacePredicate() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(obj ctrlruntimeclient.Object) bool {
		return m.IsTenant(obj.GetName())
	})
}

// InTenantNamespace passes events of objects that live in a tenant
// namespace only.
func (m Matcher) InTenantNamespace() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(obj ctrlruntimeclient.Object) bool {
		return m.IsTenant(obj.GetNamespace())
	})
}

// EnqueueOwnNamespace maps an object in a tenant namespace to the request
// of that namespace.
func (m Matcher) EnqueueOwnNamespace() handler.EventHandler {
	return EnqueueOwnNamespaceOf[ctrlruntimeclient.Object](m)
}

// EnqueueOwnNamespaceOf is EnqueueOwnNamespace for the typed sources of
// caches of our own (source.Kind).
func EnqueueOwnNamespaceOf[T ctrlruntimeclient.Object](m Matcher) handler.TypedEventHandler[T, reconcile.Request] {
	return handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, obj T) []reconcile.Request {
		if !m.IsTenant(obj.GetNamespace()) {
			return nil
		}
		return []reconcile.Request{Request(obj.GetNamespace())}
	})
}

// EnqueueAll maps any event to one request per live tenant namespace, read
// from reader (normally the manager's cache, so the fan-out costs no API
// request).
func (m Matcher) EnqueueAll(reader ctrlruntimeclient.Reader) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ ctrlruntimeclient.Object) []reconcile.Request {
		return m.AllRequests(ctx, reader)
	})
}

// AllRequests returns one request per live tenant namespace, read from
// reader. A failed list is logged and yields none: the change reaches the
// namespaces at their next event.
func (m Matcher) AllRequests(ctx context.Context, reader ctrlruntimeclient.Reader) []reconcile.Request {
	names, err := m.List(ctx, reader)
	if err != nil {
		log.FromContext(ctx).Error(err, "failed to list tenant namespaces; the change reaches them at their next event")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(names))
	for _, name := range names {
		reqs = append(reqs, Request(name))
	}
	return reqs
}

// List returns the names of the tenant namespaces that are neither being
// deleted nor torn down.
func (m Matcher) List(ctx context.Context, reader ctrlruntimeclient.Reader) ([]string, error) {
	var list corev1.NamespaceList
	if err := reader.List(ctx, &list); err != nil {
		return nil, err
	}
	var names []string
	for i := range list.Items {
		ns := &list.Items[i]
		if m.IsTenant(ns.Name) && live(ns) {
			names = append(names, ns.Name)
		}
	}
	return names, nil
}

// Live returns the tenant namespace of the request when it exists, is a
// tenant namespace and is neither being deleted nor torn down (see
// DeletingAnnotation); otherwise ok is false.
func (m Matcher) Live(ctx context.Context, reader ctrlruntimeclient.Reader, req reconcile.Request) (name string, ok bool, err error) {
	if !m.IsTenant(req.Name) {
		return "", false, nil
	}
	var ns corev1.Namespace
	if err := reader.Get(ctx, types.NamespacedName{Name: req.Name}, &ns); err != nil {
		return "", false, ctrlruntimeclient.IgnoreNotFound(err)
	}
	return ns.Name, live(&ns), nil
}

// DeletingAnnotation set to "true" on a tenant namespace tells the
// controllers that its TenantCluster is being torn down: they treat the
// namespace as gone and stop writing for it.
const DeletingAnnotation = "infra.kkp-kubevirt.io/deleting"

// live reports whether ns is neither being deleted nor torn down.
func live(ns *corev1.Namespace) bool {
	return ns.DeletionTimestamp.IsZero() && ns.Annotations[DeletingAnnotation] != "true"
}

// ManagedByLabel marks the objects the infra-controller created; objects
// without it are never updated or deleted by it.
const ManagedByLabel = "kkp-kubevirt.io/managed-by"

// ManagedByValue is the value of ManagedByLabel on our objects.
const ManagedByValue = "infra-controller"

// IsManaged reports whether obj carries our ManagedByLabel.
func IsManaged(obj ctrlruntimeclient.Object) bool {
	return obj.GetLabels()[ManagedByLabel] == ManagedByValue
}
