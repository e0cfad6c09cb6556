package imagecache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/imagecache"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// ControllerName names the controller in logs and metrics.
const ControllerName = "image-cache"

// DefaultGracePeriod is how long a cache DataVolume stays after the last
// VirtualMachine referring to it is gone.
const DefaultGracePeriod = time.Hour

// Options configures the controller.
type Options struct {
	// GracePeriod is how long an unused cache DataVolume is kept;
	// DefaultGracePeriod when zero.
	GracePeriod time.Duration
}

func (o Options) grace() time.Duration {
	if o.GracePeriod <= 0 {
		return DefaultGracePeriod
	}
	return o.GracePeriod
}

// CacheByObject returns what the manager's cache must select for this
// controller: only ConfigMaps named imagecache.ConfigMapName and only
// DataVolumes with the imagecache.Label.
func CacheByObject() map[ctrlruntimeclient.Object]cache.ByObject {
	cached, _ := labels.NewRequirement(imagecache.Label, selection.Exists, nil)
	return map[ctrlruntimeclient.Object]cache.ByObject{
		&corev1.ConfigMap{}:      {Field: fields.OneTermEqualSelector("metadata.name", imagecache.ConfigMapName)},
		newObject(DataVolumeGVK): {Label: labels.NewSelector().Add(*cached)},
	}
}

// Reconciler keeps the image cache of one tenant namespace per request.
type Reconciler struct {
	// Reader reads Namespaces, ConfigMaps, DataVolumes and
	// VirtualMachines; the manager's cache set up with CacheByObject.
	Reader ctrlruntimeclient.Reader
	// Writer creates and deletes DataVolumes.
	Writer ctrlruntimeclient.Writer
	// APIReader reads, uncached, an object in the way of a Create, to
	// tell ours (a cache behind our own write) from a foreign one.
	APIReader ctrlruntimeclient.Reader
	// Recorder records a Warning event on a ConfigMap with refused
	// entries; SetupWithManager sets it when nil.
	Recorder events.EventRecorder
	// Tenants recognises tenant namespaces.
	Tenants tenant.Matcher
	// Options configures the controller.
	Options Options
	// Now returns the current time; time.Now when nil.
	Now func() time.Time

	mu sync.Mutex
	// unusedSince records when a cache DataVolume was first seen unused.
	// It lives in memory only: after a restart the grace period starts
	// again, which only ever keeps a volume longer.
	unusedSince map[types.NamespacedName]time.Time
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := r.Tenants.Validate(); err != nil {
		return err
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(ControllerName)
	}
	own := r.Tenants.EnqueueOwnNamespace()
	err := r.Tenants.NamespaceController(mgr, ControllerName, 0).
		Watches(&corev1.ConfigMap{}, own).
		Watches(newObject(DataVolumeGVK), own).
		Watches(newObject(VirtualMachineGVK), own).
		Complete(r)
	if err != nil {
		return fmt.Errorf("failed to set up the %s controller: %w", ControllerName, err)
	}
	return nil
}

// Reconcile imports the named images of one tenant namespace and removes
// its unused cache DataVolumes.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	namespace, live, err := r.Tenants.Live(ctx, r.Reader, req)
	if err != nil || !live {
		return reconcile.Result{}, err
	}
	images, err := r.images(ctx, namespace)
	if err != nil {
		return reconcile.Result{}, err
	}
	volumes := newList(DataVolumeGVK)
	if err := r.Reader.List(ctx, volumes, ctrlruntimeclient.InNamespace(namespace)); err != nil {
		return reconcile.Result{}, fmt.Errorf("failed to list the DataVolumes of %s: %w", namespace, err)
	}
	vms := newList(VirtualMachineGVK)
	if err := r.Reader.List(ctx, vms, ctrlruntimeclient.InNamespace(namespace)); err != nil {
		return reconcile.Result{}, fmt.Errorf("failed to list the VirtualMachines of %s: %w", namespace, err)
	}
	used := map[string]bool{}
	for i := range vms.Items {
		for _, name := range references(&vms.Items[i], namespace) {
			used[name] = true
		}
	}
	existing := map[string]*unstructured.Unstructured{}
	for i := range volumes.Items {
		existing[volumes.Items[i].GetName()] = &volumes.Items[i]
	}
	wanted := map[string]bool{}
	var errs []error
	for _, img := range images {
		want := namedDataVolume(namespace, img)
		wanted[want.GetName()] = true
		errs = append(errs, r.ensureNamed(ctx, want, existing[want.GetName()], used[want.GetName()]))
	}
	after, err := r.collect(ctx, volumes.Items, wanted, used)
	errs = append(errs, err)
	// A requeue returned with an error is ignored by controller-runtime.
	if err := errors.Join(errs...); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{RequeueAfter: after}, nil
}

// images returns the valid named images of the namespace; invalid entries
// are logged and skipped. A list that cannot be read is an error, so that
// nothing is collected because of it.
func (r *Reconciler) images(ctx context.Context, namespace string) ([]imagecache.Image, error) {
	cm, err := tenant.ReadConfigMap(ctx, r.Reader, namespace, imagecache.ConfigMapName)
	if cm == nil || err != nil {
		return nil, err
	}
	images, err := imagecache.ParseImages(cm)
	if err != nil {
		log.FromContext(ctx).Error(err, "skipping invalid images")
		tenant.WarnRefused(r.Recorder, cm, "CacheImages", err)
	}
	return images, nil
}

// ensureNamed creates the DataVolume of a named image, or re-creates ours
// when the image changed and no VM refers to it any more. A DataVolume of
// that name without our label is left alone.
func (r *Reconciler) ensureNamed(ctx context.Context, want, have *unstructured.Unstructured, used bool) error {
	switch {
	case have == nil:
		_, err := tenant.Target(r.Reader, r.APIReader, r.Writer).Create(ctx, want)
		return err
	case !tenant.IsManaged(have):
		log.FromContext(ctx).Info("leaving a DataVolume we did not create alone", "name", want.GetName())
		return nil
	case sameImage(have, want):
		return nil
	case used:
		log.FromContext(ctx).Info("the image changed; the DataVolume is re-created once no VM refers to it", "name", want.GetName())
		return nil
	default:
		// The create follows at the reconcile the deletion triggers.
		return r.delete(ctx, have)
	}
}

// collect deletes the cache DataVolumes that are neither wanted nor used
// and have been so for the grace period. It returns when to look again.
func (r *Reconciler) collect(ctx context.Context, volumes []unstructured.Unstructured, wanted, used map[string]bool) (time.Duration, error) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	grace := r.Options.grace()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unusedSince == nil {
		r.unusedSince = map[types.NamespacedName]time.Time{}
	}
	var next time.Duration
	var errs []error
	for i := range volumes {
		dv := &volumes[i]
		key := types.NamespacedName{Namespace: dv.GetNamespace(), Name: dv.GetName()}
		if dv.GetLabels()[imagecache.Label] == "" || wanted[dv.GetName()] || used[dv.GetName()] || !dv.GetDeletionTimestamp().IsZero() {
			delete(r.unusedSince, key)
			continue
		}
		since, seen := r.unusedSince[key]
		if !seen {
			since = now()
			r.unusedSince[key] = since
		}
		// A new volume gets the full grace period to be referred to.
		if created := dv.GetCreationTimestamp().Time; created.After(since) {
			since = created
		}
		if left := grace - now().Sub(since); left > 0 {
			if next == 0 || left < next {
				next = left
			}
			continue
		}
		if err := r.delete(ctx, dv); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(r.unusedSince, key)
	}
	return next, errors.Join(errs...)
}

func (r *Reconciler) delete(ctx context.Context, dv *unstructured.Unstructured) error {
	target := tenant.Target(r.Reader, r.APIReader, r.Writer)
	// The provider creates cache DataVolumes too (for HTTP images), without
	// the managed-by label: a cache DataVolume is ours by imagecache.Label.
	target.Owned = func(obj ctrlruntimeclient.Object) bool { return obj.GetLabels()[imagecache.Label] != "" }
	return target.Delete(ctx, dv, "a cache DataVolume")
}
