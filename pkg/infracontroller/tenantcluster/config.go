package tenantcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/imagecache"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/netpol"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/networks"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// configMap is one ConfigMap the spec of a TenantCluster is written to: the
// same ConfigMap a plain Kubermatic layout writes by hand, read by the
// controller of that feature.
type configMap struct {
	// name is the ConfigMap's name.
	name string
	// field is the spec field it comes from.
	field string
	// data renders the field; nil when the spec has none.
	data func(*infrav1alpha1.TenantClusterSpec) (map[string]string, error)
	// parse is the feature controller's parser, run on the result so that
	// the TenantCluster reports what that controller would reject.
	parse func(*corev1.ConfigMap) error
}

// configMaps are the ConfigMaps a TenantCluster's spec is written to.
var configMaps = []configMap{
	{
		name: imagecache.ConfigMapName, field: "spec.images", data: imageData,
		parse: func(cm *corev1.ConfigMap) error { _, err := imagecache.ParseImages(cm); return err },
	},
	{
		name: networks.ConfigMapName, field: "spec.networks", data: networkData,
		parse: func(cm *corev1.ConfigMap) error { _, err := networks.ParseNetworks(cm); return err },
	},
	{
		name: netpol.ConfigMapName, field: "spec.networkPolicies", data: policyData,
		parse: func(cm *corev1.ConfigMap) error { _, err := netpol.ParseCustom(cm); return err },
	},
}

func imageData(spec *infrav1alpha1.TenantClusterSpec) (map[string]string, error) {
	return render(spec.Images, func(img infrav1alpha1.Image) (string, any) {
		return img.Name, imagecache.Image{URL: img.URL, StorageClassName: img.StorageClassName, Size: img.Size}
	}, yaml.Marshal)
}

func networkData(spec *infrav1alpha1.TenantClusterSpec) (map[string]string, error) {
	return render(spec.Networks, func(n infrav1alpha1.Network) (string, any) {
		return n.Name, n.Config
	}, json.Marshal)
}

func policyData(spec *infrav1alpha1.TenantClusterSpec) (map[string]string, error) {
	return render(spec.NetworkPolicies, func(p infrav1alpha1.NetworkPolicy) (string, any) {
		return p.Name, p.Spec
	}, json.Marshal)
}

// render encodes every item of a list under its name; nil for an empty
// list.
func render[T any](items []T, entry func(T) (string, any), encode func(any) ([]byte, error)) (map[string]string, error) {
	if len(items) == 0 {
		return nil, nil
	}
	data := make(map[string]string, len(items))
	for _, item := range items {
		name, value := entry(item)
		raw, err := encode(value)
		if err != nil {
			return nil, fmt.Errorf("failed to encode %q: %w", name, err)
		}
		data[name] = string(raw)
	}
	return data, nil
}

// configState is the outcome of writing the spec's lists of a
// TenantCluster: invalid names the entries refused (never written) and the
// lists that would replace a ConfigMap this TenantCluster did not write,
// which is never changed; failed holds the errors of the API server, worth
// a retry; unserved names the lists no controller of this process reads.
type configState struct {
	invalid, failed error
	unserved        string
}

// ensureConfig writes the valid images, networks and custom policies of
// tc to their ConfigMaps in its namespace and deletes the ConfigMaps it
// wrote for lists that are now empty.
func (r *Reconciler) ensureConfig(ctx context.Context, tc *infrav1alpha1.TenantCluster) configState {
	namespace := r.Namespace(tc)
	var bad, errs []error
	for _, cm := range configMaps {
		refused, err := r.ensureConfigMap(ctx, tc, namespace, cm)
		if refused != nil {
			bad = append(bad, fmt.Errorf("%s: %w", cm.field, refused))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", cm.field, err))
		}
	}
	return configState{invalid: errors.Join(bad...), failed: errors.Join(errs...), unserved: r.unserved(&tc.Spec)}
}

// ensureConfigMap writes the valid entries of one list to its ConfigMap;
// refused names the entries left out, or a ConfigMap in the way.
func (r *Reconciler) ensureConfigMap(ctx context.Context, tc *infrav1alpha1.TenantCluster, namespace string, cm configMap) (refused, err error) {
	data, err := cm.data(&tc.Spec)
	if err != nil {
		return err, nil
	}
	have, err := tenant.ReadConfigMap(ctx, r.configReader(), namespace, cm.name)
	if err != nil {
		return nil, err
	}
	ours := have != nil && have.Labels[OwnerLabel] == tc.Name
	if data != nil && have != nil && !ours {
		return fmt.Errorf("ConfigMap %s/%s exists and was not written from this TenantCluster: delete it to manage the list here", namespace, cm.name), nil
	}
	data, refused = validEntries(cm, namespace, data)
	switch {
	case len(data) == 0 && ours:
		//writepath:direct the ConfigMap was read uncached and is ours by this TenantCluster's owner label, the rule of this reconciler
		if err := r.Client.Delete(ctx, have); ctrlruntimeclient.IgnoreNotFound(err) != nil {
			return refused, fmt.Errorf("failed to delete ConfigMap %s/%s: %w", namespace, cm.name, err)
		}
		return refused, nil
	case len(data) == 0:
		return refused, nil
	}
	return refused, r.writeConfigMap(ctx, tc, have, namespace, cm.name, data)
}

// validEntries returns the entries of data that the feature controller's
// parser accepts, each parsed alone, and the errors of the others.
func validEntries(cm configMap, namespace string, data map[string]string) (map[string]string, error) {
	valid := make(map[string]string, len(data))
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(data)) {
		one := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: cm.name}, Data: map[string]string{key: data[key]}}
		if err := cm.parse(one); err != nil {
			errs = append(errs, err)
			continue
		}
		valid[key] = data[key]
	}
	return valid, errors.Join(errs...)
}

// writeConfigMap creates ConfigMap name with data, or patches have.
func (r *Reconciler) writeConfigMap(ctx context.Context, tc *infrav1alpha1.TenantCluster, have *corev1.ConfigMap, namespace, name string, data map[string]string) error {
	if have == nil {
		want := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: namespace, Name: name,
				Labels: map[string]string{tenant.ManagedByLabel: tenant.ManagedByValue, OwnerLabel: tc.Name},
			},
			Data: data,
		}
		//writepath:direct created when an uncached read found none; AlreadyExists is an error the next reconcile resolves
		if err := r.Client.Create(ctx, want); err != nil {
			return fmt.Errorf("failed to create ConfigMap %s/%s: %w", namespace, name, err)
		}
		return nil
	}
	if maps.Equal(have.Data, data) && have.Labels[tenant.ManagedByLabel] == tenant.ManagedByValue {
		return nil
	}
	// A merge patch from the ConfigMap as read sets the changed keys and
	// removes the dropped ones, without a resourceVersion.
	want := have.DeepCopy()
	want.Data = data
	want.Labels[tenant.ManagedByLabel] = tenant.ManagedByValue
	//writepath:direct a merge patch from the ConfigMap as read removes the dropped keys and needs no field manager of its own; package apply has no merge patch yet
	if err := r.Client.Patch(ctx, want, ctrlruntimeclient.MergeFrom(have)); err != nil {
		return fmt.Errorf("failed to patch ConfigMap %s/%s: %w", namespace, name, err)
	}
	return nil
}

// condition is ConditionConfigReady for s: failed first, then refused
// entries, then lists no controller of this process reads.
func (s configState) condition(generation int64) metav1.Condition {
	c := metav1.Condition{Type: infrav1alpha1.ConditionConfigReady, Status: metav1.ConditionTrue, ObservedGeneration: generation,
		Reason: infrav1alpha1.ReasonWritten, Message: "images, networks and policies are in the namespace's ConfigMaps"}
	switch {
	case s.failed != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1alpha1.ReasonFailed, s.failed.Error()
	case s.invalid != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1alpha1.ReasonInvalidConfig,
			"refused, not written: "+s.invalid.Error()
	case s.unserved != "":
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1alpha1.ReasonFeatureOff, s.unserved
	}
	return c
}

// unserved names the lists of spec that no controller of this process
// reads, or returns "".
func (r *Reconciler) unserved(spec *infrav1alpha1.TenantClusterSpec) string {
	var off []string
	if r.ImageCacheOff && len(spec.Images) > 0 {
		off = append(off, "spec.images: the image cache is switched off in the infra-controller (--image-cache=false)")
	}
	if r.NetworksOff && len(spec.Networks) > 0 {
		off = append(off, "spec.networks: tenant networks are switched off in the infra-controller (--tenant-networks=false)")
	}
	return strings.Join(off, "; ")
}

// configReader reads the ConfigMaps a TenantCluster wrote: the cache of
// those ConfigMaps when the controller runs in a manager.
func (r *Reconciler) configReader() ctrlruntimeclient.Reader {
	if r.ConfigMaps != nil {
		return r.ConfigMaps
	}
	return r.APIReader
}
