package networks

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// ControllerName names the controller in logs and metrics.
const ControllerName = "tenant-networks"

// CacheByObject returns what the manager's cache must select for this
// controller and the VLAN controller (package vlan): only our
// NetworkAttachmentDefinitions, the ones with Label. This controller keeps
// those whose Label is "true".
func CacheByObject() map[ctrlruntimeclient.Object]cache.ByObject {
	selector := labels.SelectorFromSet(labels.Set{tenant.ManagedByLabel: tenant.ManagedByValue})
	if hasLabel, err := labels.NewRequirement(Label, selection.Exists, nil); err == nil {
		selector = selector.Add(*hasLabel)
	}
	return map[ctrlruntimeclient.Object]cache.ByObject{newObject(): {Label: selector}}
}

// Reconciler keeps the NetworkAttachmentDefinitions of one tenant
// namespace per request.
type Reconciler struct {
	// Reader reads Namespaces and NetworkAttachmentDefinitions; the
	// manager's cache set up with CacheByObject.
	Reader ctrlruntimeclient.Reader
	// Writer writes NetworkAttachmentDefinitions.
	Writer ctrlruntimeclient.Writer
	// APIReader reads, uncached, an object in the way of a Create, to
	// tell ours (a cache behind our own write) from a foreign one.
	APIReader ctrlruntimeclient.Reader
	// Recorder records a Warning event on a ConfigMap with refused
	// entries; SetupWithManager sets it when nil.
	Recorder events.EventRecorder
	// Tenants recognises tenant namespaces.
	Tenants tenant.Matcher

	configMaps cache.Cache
}

// SetupWithManager registers the controller and a cache of the
// ConfigMaps named ConfigMapName.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := r.Tenants.Validate(); err != nil {
		return err
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(ControllerName)
	}
	configMaps, err := tenant.ConfigMapCache(mgr, ConfigMapName)
	if err != nil {
		return err
	}
	r.configMaps = configMaps
	err = r.Tenants.NamespaceController(mgr, ControllerName, 0).
		Watches(newObject(), r.Tenants.EnqueueOwnNamespace()).
		WatchesRawSource(r.Tenants.ConfigMapSource(configMaps)).
		Complete(r)
	if err != nil {
		return fmt.Errorf("failed to set up the %s controller: %w", ControllerName, err)
	}
	return nil
}

// Reconcile brings the networks of one tenant namespace up to date.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	namespace, live, err := r.Tenants.Live(ctx, r.Reader, req)
	if err != nil || !live {
		return reconcile.Result{}, err
	}
	networks, err := r.networks(ctx, namespace)
	if err != nil {
		return reconcile.Result{}, err
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(NetworkAttachmentDefinitionGVK.GroupVersion().WithKind(NetworkAttachmentDefinitionGVK.Kind + "List"))
	if err := r.Reader.List(ctx, list, ctrlruntimeclient.InNamespace(namespace)); err != nil {
		return reconcile.Result{}, fmt.Errorf("failed to list the NetworkAttachmentDefinitions of %s: %w", namespace, err)
	}
	ours := map[string]*unstructured.Unstructured{}
	// Managed with another value of Label: the tenant's VLAN network.
	others := map[string]bool{}
	for i := range list.Items {
		if !tenant.IsManaged(&list.Items[i]) {
			continue
		}
		if list.Items[i].GetLabels()[Label] == "true" {
			ours[list.Items[i].GetName()] = &list.Items[i]
		} else {
			others[list.Items[i].GetName()] = true
		}
	}
	var errs []error
	for _, n := range networks {
		if others[n.Name] {
			log.FromContext(ctx).Info("skipping a network named like the tenant's VLAN network", "name", n.Name)
			continue
		}
		errs = append(errs, r.ensure(ctx, attachment(namespace, n), ours[n.Name]))
		delete(ours, n.Name)
	}
	for _, stale := range ours {
		errs = append(errs, tenant.Target(r.Reader, r.APIReader, r.Writer).Delete(ctx, stale, "a network no longer listed"))
	}
	return reconcile.Result{}, errors.Join(errs...)
}

// networks returns the valid networks of the namespace; invalid entries
// are logged and skipped, and an unreadable list deletes nothing.
func (r *Reconciler) networks(ctx context.Context, namespace string) ([]Network, error) {
	cm, err := tenant.ReadConfigMap(ctx, r.configMaps, namespace, ConfigMapName)
	if cm == nil || err != nil {
		return nil, err
	}
	networks, err := ParseNetworks(cm)
	if err != nil {
		log.FromContext(ctx).Error(err, "skipping invalid networks")
		tenant.WarnRefused(r.Recorder, cm, "ApplyNetworks", err)
	}
	return networks, nil
}

// ensure writes want with package apply; have is our network of its name
// from the cache, nil when there is none. The cache sees only ours, so a
// foreign object of the same name makes the Create fail with
// AlreadyExists, and it is left alone.
func (r *Reconciler) ensure(ctx context.Context, want, have *unstructured.Unstructured) error {
	_, err := tenant.Target(r.Reader, r.APIReader, r.Writer).Known(ctx, have, want)
	return err
}

func newObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(NetworkAttachmentDefinitionGVK)
	return u
}
