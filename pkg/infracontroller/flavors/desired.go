package flavors

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// DefaultSourceNamespace is the namespace whose presets are copied.
const DefaultSourceNamespace = "default"

// Options selects what the controller offers in tenant namespaces.
type Options struct {
	// SourceNamespace holds the presets to copy; DefaultSourceNamespace
	// when empty.
	SourceNamespace string
	// Presets copies the source presets and offers kubermatic-standard.
	Presets bool
	// Instancetypes offers standard-2, standard-4 and standard-8.
	Instancetypes bool
	// Preferences offers sockets-advantage.
	Preferences bool
	// PerformanceInstancetypes offers performance-2, -4 and -8;
	// DensityInstancetypes offers density-2, -4 and -8.
	PerformanceInstancetypes bool
	DensityInstancetypes     bool
	// MaxConcurrentReconciles bounds how many tenant namespaces are
	// synced at once; DefaultWorkers when zero.
	MaxConcurrentReconciles int
}

func (o Options) sourceNamespace() string {
	if o.SourceNamespace == "" {
		return DefaultSourceNamespace
	}
	return o.SourceNamespace
}

// enabled reports which kinds are switched on.
func (o Options) enabled() map[schema.GroupVersionKind]bool {
	return map[schema.GroupVersionKind]bool{
		PresetGVK:       o.Presets,
		InstancetypeGVK: o.Instancetypes || o.PerformanceInstancetypes || o.DensityInstancetypes,
		PreferenceGVK:   o.Preferences,
	}
}

// allKinds lists every kind the controller may have written, in a fixed
// order.
var allKinds = []schema.GroupVersionKind{PresetGVK, InstancetypeGVK, PreferenceGVK}

// Set is what a tenant namespace should hold, by kind and name. Only
// labels and spec of the objects are meaningful; every object carries
// tenant.ManagedByLabel.
type Set map[schema.GroupVersionKind]map[string]*unstructured.Unstructured

// Desired computes what every tenant namespace should hold from the
// presets of the source namespace. Source presets being deleted are left
// out; a source preset named kubermatic-standard replaces the built-in one.
func Desired(o Options, sourcePresets []unstructured.Unstructured) Set {
	set := Set{}
	for _, gvk := range allKinds {
		set[gvk] = map[string]*unstructured.Unstructured{}
	}
	if o.Presets {
		set.add(StandardPreset())
		for i := range sourcePresets {
			src := &sourcePresets[i]
			if !src.GetDeletionTimestamp().IsZero() {
				continue
			}
			obj := newObject(PresetGVK, src.GetName(), nil)
			delete(obj.Object, "spec")
			if spec, ok := src.Object["spec"]; ok {
				obj.Object["spec"] = runtime.DeepCopyJSONValue(spec)
			}
			obj.SetLabels(src.GetLabels())
			set.add(obj)
		}
	}
	for _, series := range []struct {
		on  bool
		get func() []*unstructured.Unstructured
	}{
		{o.Instancetypes, StandardInstancetypes},
		{o.PerformanceInstancetypes, PerformanceInstancetypes},
		{o.DensityInstancetypes, DensityInstancetypes},
	} {
		if !series.on {
			continue
		}
		for _, obj := range series.get() {
			set.add(obj)
		}
	}
	if o.Preferences {
		for _, obj := range StandardPreferences() {
			set.add(obj)
		}
	}
	return set
}

// add stores obj with our ownership label added.
func (s Set) add(obj *unstructured.Unstructured) {
	labels := map[string]string{}
	for k, v := range obj.GetLabels() {
		labels[k] = v
	}
	labels[tenant.ManagedByLabel] = tenant.ManagedByValue
	obj.SetLabels(labels)
	s[obj.GroupVersionKind()][obj.GetName()] = obj
}

// notServedTTL is how long a kind the API server did not serve is believed
// absent before the REST mapper (and with it discovery) is asked again.
const notServedTTL = 5 * time.Minute

// lister lists objects by kind, remembering kinds the API server does not
// serve so that each reconcile does not cost a discovery request.
type lister struct {
	reader ctrlruntimeclient.Reader

	mu        sync.Mutex
	notServed map[schema.GroupVersionKind]time.Time
}

// list lists the objects of gvk in namespace; a kind the API server does
// not serve lists as empty.
func (l *lister) list(ctx context.Context, gvk schema.GroupVersionKind, namespace string) ([]unstructured.Unstructured, error) {
	l.mu.Lock()
	until, absent := l.notServed[gvk]
	l.mu.Unlock()
	if absent && time.Now().Before(until) {
		return nil, nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := l.reader.List(ctx, list, ctrlruntimeclient.InNamespace(namespace)); err != nil {
		if meta.IsNoMatchError(err) {
			l.mu.Lock()
			if l.notServed == nil {
				l.notServed = map[schema.GroupVersionKind]time.Time{}
			}
			l.notServed[gvk] = time.Now().Add(notServedTTL)
			l.mu.Unlock()
			return nil, nil
		}
		return nil, fmt.Errorf("failed to list %s in %s: %w", gvk.Kind, namespace, err)
	}
	return list.Items, nil
}
