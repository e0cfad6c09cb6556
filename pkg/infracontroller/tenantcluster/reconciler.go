package tenantcluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/queue"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/remote/outage"
)

// ControllerName is the name of the controller.
const ControllerName = "tenant-clusters"

// OwnerLabel on a namespace names the TenantCluster that owns it.
const OwnerLabel = "infra.kkp-kubevirt.io/tenant-cluster"

// DefaultKubeconfigKey is the key of the kubeconfig in a referenced Secret
// whose reference names no key.
const DefaultKubeconfigKey = "kubeconfig"

// VirtualMachineGVK is the kind deleted first when a TenantCluster goes.
var VirtualMachineGVK = schema.GroupVersionKind{Group: "kubevirt.io", Version: "v1", Kind: "VirtualMachine"}

// pollInterval is how often a deletion re-checks what it waits for.
const pollInterval = 2 * time.Second

// Connections are the connections to tenant clusters as the TenantCluster
// controller uses them (tenantconn.Clients in the infra-controller).
type Connections interface {
	// Probe asks the tenant cluster of namespace whether it answers with
	// kubeconfig, which becomes the health of the namespace's connection,
	// and returns the API server the kubeconfig names.
	Probe(ctx context.Context, namespace string, kubeconfig []byte) (host string, err error)
	// Forget drops the connection of namespace.
	Forget(namespace string)
}

// Reconciler keeps the namespaces of TenantClusters.
type Reconciler struct {
	// Client reads TenantClusters, Namespaces and VirtualMachines (from
	// the cache) and writes them.
	Client ctrlruntimeclient.Client
	// APIReader reads the referenced kubeconfig Secrets, which the cache
	// does not hold.
	APIReader ctrlruntimeclient.Reader
	// Tenants gives the namespace prefix.
	Tenants tenant.Matcher
	// KubeconfigSecret is the name of the Secret in the tenant namespace
	// that receives the tenant kubeconfig, the one the storage-class
	// controller reads.
	KubeconfigSecret string
	// KubeconfigSecretKey is the key of the kubeconfig in that Secret.
	KubeconfigSecretKey string
	// ConfigMaps reads the ConfigMaps written from TenantCluster specs;
	// SetupWithManager sets it to a cache of those only. APIReader when
	// nil.
	ConfigMaps ctrlruntimeclient.Reader
	// Tenant removes what the controllers made in a tenant cluster when
	// its TenantCluster is deleted; nil leaves the tenant cluster alone.
	Tenant TenantCleanup
	// TenantCleanupTimeout is how long a deletion retries a tenant cluster
	// that fails; DefaultTenantCleanupTimeout when 0.
	TenantCleanupTimeout time.Duration
	// Recorder records the events of TenantClusters; none when nil.
	Recorder events.EventRecorder
	// Connections are the connections to tenant clusters, shared with the
	// other reconcilers of the infra-controller: the probe that tells
	// whether a tenant cluster answers goes over them and becomes their
	// health. Required.
	Connections Connections
	// ImageCacheOff and NetworksOff tell that no controller of this
	// process reads spec.images or spec.networks; a TenantCluster that
	// sets them is told so in ConfigReady.
	ImageCacheOff, NetworksOff bool
}

// TenantCleanup removes what the infra-controller made in a tenant
// cluster.
type TenantCleanup interface {
	// Clean deletes those objects in the tenant cluster of namespace and
	// returns how many are still there (deleted ones that have not gone
	// yet, or ones it just deleted).
	Clean(ctx context.Context, namespace string, kubeconfig []byte) (left int, err error)
}

// SetupWithManager registers the controller for TenantClusters and the
// namespaces they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := r.Tenants.Validate(); err != nil {
		return err
	}
	if r.Connections == nil {
		return errors.New("the TenantCluster controller needs the tenant connections (Connections)")
	}
	configMaps, err := ownedConfigMapCache(mgr)
	if err != nil {
		return err
	}
	r.ConfigMaps = configMaps
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&infrav1alpha1.TenantCluster{}).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(ownerRequest)).
		WatchesRawSource(source.Kind(configMaps, &corev1.ConfigMap{}, handler.TypedEnqueueRequestsFromMapFunc(
			func(ctx context.Context, cm *corev1.ConfigMap) []reconcile.Request { return ownerRequest(ctx, cm) }))).
		WithOptions(controller.Options{RateLimiter: queue.RateLimiter(0)}).
		Complete(r)
}

// ownedConfigMapCache returns a cache, run by mgr, of the ConfigMaps that
// carry OwnerLabel: the ones written from TenantCluster specs.
func ownedConfigMapCache(mgr ctrl.Manager) (cache.Cache, error) {
	owned, err := labels.NewRequirement(OwnerLabel, selection.Exists, nil)
	if err != nil {
		return nil, fmt.Errorf("failed to select owned ConfigMaps: %w", err)
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		NewInformer:          outage.NewInformer,
		Scheme:               mgr.GetScheme(),
		Mapper:               mgr.GetRESTMapper(),
		DefaultLabelSelector: labels.NewSelector().Add(*owned),
	})
	if err != nil {
		return nil, fmt.Errorf("failed to create the cache of owned ConfigMaps: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return nil, fmt.Errorf("failed to add the cache of owned ConfigMaps: %w", err)
	}
	return c, nil
}

// Namespace returns the infra namespace of tc.
func (r *Reconciler) Namespace(tc *infrav1alpha1.TenantCluster) string {
	return r.Tenants.Prefix + tc.Spec.ID
}

// Reconcile keeps one TenantCluster: it reads it, makes sure of its
// finalizer, runs the phases (namespace, tenant kubeconfig, configuration)
// or the deletion, computes the status once from what they found and
// writes it with one patch when it changed.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var tc infrav1alpha1.TenantCluster
	if err := r.Client.Get(ctx, req.NamespacedName, &tc); err != nil {
		return reconcile.Result{}, ctrlruntimeclient.IgnoreNotFound(err)
	}
	if !tc.DeletionTimestamp.IsZero() {
		return r.delete(ctx, &tc)
	}
	if err := r.addFinalizer(ctx, &tc); err != nil {
		return reconcile.Result{}, err
	}
	before := tc.Status.DeepCopy()
	found := r.observe(ctx, &tc)
	setStatus(&tc, found)
	r.announce(&tc, before)
	if err := r.patchStatus(ctx, &tc, before); err != nil {
		return reconcile.Result{}, errors.Join(found.err(), err)
	}
	return found.result()
}

// observe runs the phases of a TenantCluster that is not being deleted,
// each only once the one before it has what it needs, and returns what
// they found.
func (r *Reconciler) observe(ctx context.Context, tc *infrav1alpha1.TenantCluster) observation {
	found := observation{namespace: r.Namespace(tc)}
	found.namespaceErr = r.ensureNamespace(ctx, tc)
	if found.namespaceErr != nil {
		return found
	}
	kc := r.checkKubeconfig(ctx, tc)
	found.kubeconfig = &kc
	cfg := r.ensureConfig(ctx, tc)
	found.config = &cfg
	return found
}

// ownerRequest maps a namespace to the request of the TenantCluster
// that owns it. The namespace carries a label rather than an owner
// reference, so that no garbage collector deletes it before the VMs in it.
func ownerRequest(_ context.Context, obj ctrlruntimeclient.Object) []reconcile.Request {
	owner := obj.GetLabels()[OwnerLabel]
	if owner == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: owner}}}
}

// emptyList returns an empty unstructured list of gvk.
func emptyList(gvk schema.GroupVersionKind) *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	return l
}
