package tenantcluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/outage"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/queue"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
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
	// Probe checks that a tenant cluster answers; a version request with
	// a short timeout when nil.
	Probe func(context.Context, *rest.Config) error
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

// Reconcile creates or tears down the namespace of one TenantCluster.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var tc infrav1alpha1.TenantCluster
	if err := r.Client.Get(ctx, req.NamespacedName, &tc); err != nil {
		return reconcile.Result{}, ctrlruntimeclient.IgnoreNotFound(err)
	}
	if !tc.DeletionTimestamp.IsZero() {
		return r.delete(ctx, &tc)
	}
	if !controllerutil.ContainsFinalizer(&tc, infrav1alpha1.Finalizer) {
		controllerutil.AddFinalizer(&tc, infrav1alpha1.Finalizer)
		if err := r.Client.Update(ctx, &tc); err != nil {
			return reconcile.Result{}, fmt.Errorf("failed to add the finalizer to TenantCluster %s: %w", tc.Name, err)
		}
	}
	before := tc.Status.DeepCopy()
	nsErr := r.ensureNamespace(ctx, &tc)
	setCondition(&tc, infrav1alpha1.ConditionNamespaceReady, nsErr, infrav1alpha1.ReasonCreated, "namespace "+r.Namespace(&tc)+" exists")
	var kc kubeconfigState
	var cfgErr error
	if nsErr == nil {
		kc = r.checkKubeconfig(ctx, &tc)
		setStatusCondition(&tc, kc.condition(tc.Generation))
		var invalid error
		invalid, cfgErr = r.ensureConfig(ctx, &tc)
		r.setConfigCondition(&tc, invalid, cfgErr)
	}
	setReady(&tc)
	r.announce(&tc, before)
	if err := r.updateStatus(ctx, &tc, before); err != nil {
		return reconcile.Result{}, err
	}
	if nsErr != nil {
		return reconcile.Result{}, nsErr
	}
	if err := errors.Join(kc.err, cfgErr); err != nil {
		return reconcile.Result{}, err
	}
	if !kc.ready() {
		return reconcile.Result{RequeueAfter: notReadyRecheck}, nil
	}
	return reconcile.Result{RequeueAfter: readyRecheck}, nil
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

// ensureNamespace creates the namespace of tc, or checks that an existing
// one is not owned by another TenantCluster and adopts it, and records the
// options of tc on it.
func (r *Reconciler) ensureNamespace(ctx context.Context, tc *infrav1alpha1.TenantCluster) error {
	name := r.Namespace(tc)
	tc.Status.Namespace = name
	options, err := tc.Spec.Options.Annotation()
	if err != nil {
		return err
	}
	var ns corev1.Namespace
	err = r.Client.Get(ctx, types.NamespacedName{Name: name}, &ns)
	if apierrors.IsNotFound(err) {
		ns = corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{OwnerLabel: tc.Name}}}
		setOptions(&ns, options)
		if err := r.Client.Create(ctx, &ns); err != nil {
			return fmt.Errorf("failed to create namespace %s: %w", name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to get namespace %s: %w", name, err)
	}
	if owner := ns.Labels[OwnerLabel]; owner != "" && owner != tc.Name {
		return fmt.Errorf("namespace %s belongs to TenantCluster %s", name, owner)
	}
	if !ns.DeletionTimestamp.IsZero() {
		return fmt.Errorf("namespace %s is being deleted", name)
	}
	if ns.Labels[OwnerLabel] == tc.Name && ns.Annotations[infrav1alpha1.OptionsAnnotation] == options {
		return nil
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[OwnerLabel] = tc.Name
	setOptions(&ns, options)
	if err := r.Client.Update(ctx, &ns); err != nil {
		return fmt.Errorf("failed to update namespace %s: %w", name, err)
	}
	return nil
}

// setOptions sets the options annotation of ns, removing it for "".
func setOptions(ns *corev1.Namespace, options string) {
	if options == "" {
		delete(ns.Annotations, infrav1alpha1.OptionsAnnotation)
		return
	}
	if ns.Annotations == nil {
		ns.Annotations = map[string]string{}
	}
	ns.Annotations[infrav1alpha1.OptionsAnnotation] = options
}

// updateStatus writes the status when it changed.
func (r *Reconciler) updateStatus(ctx context.Context, tc *infrav1alpha1.TenantCluster, before *infrav1alpha1.TenantClusterStatus) error {
	if equalStatus(before, &tc.Status) {
		return nil
	}
	if err := r.Client.Status().Update(ctx, tc); err != nil {
		return fmt.Errorf("failed to update the status of TenantCluster %s: %w", tc.Name, err)
	}
	return nil
}

// setCondition sets condition typ to true when err is nil, else to false
// with err's message.
func setCondition(tc *infrav1alpha1.TenantCluster, typ string, err error, reason, message string) {
	c := metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, Message: message, ObservedGeneration: tc.Generation}
	if err != nil {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1alpha1.ReasonFailed, err.Error()
	}
	setStatusCondition(tc, c)
}

// setStatusCondition sets c in the status of tc.
func setStatusCondition(tc *infrav1alpha1.TenantCluster, c metav1.Condition) {
	meta.SetStatusCondition(&tc.Status.Conditions, c)
}

// equalStatus compares two statuses ignoring condition transition times,
// which SetStatusCondition keeps when the status does not change.
func equalStatus(a, b *infrav1alpha1.TenantClusterStatus) bool {
	if a.Namespace != b.Namespace || len(a.Conditions) != len(b.Conditions) {
		return false
	}
	for i := range a.Conditions {
		x, y := a.Conditions[i], b.Conditions[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message || x.ObservedGeneration != y.ObservedGeneration {
			return false
		}
	}
	return true
}

// emptyList returns an empty unstructured list of gvk.
func emptyList(gvk schema.GroupVersionKind) *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	return l
}
