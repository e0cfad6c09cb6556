package tenantcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
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

// ensureConfig writes the images, networks and custom policies of tc to
// their ConfigMaps in its namespace and deletes the ConfigMaps it wrote
// for lists that are now empty. A ConfigMap of the same name that it did
// not write is never changed: a spec list that would replace one is an
// error naming the field.
func (r *Reconciler) ensureConfig(ctx context.Context, tc *infrav1alpha1.TenantCluster) error {
	namespace := r.Namespace(tc)
	var errs []error
	for _, cm := range configMaps {
		if err := r.ensureConfigMap(ctx, tc, namespace, cm); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", cm.field, err))
		}
	}
	return errors.Join(errs...)
}

func (r *Reconciler) ensureConfigMap(ctx context.Context, tc *infrav1alpha1.TenantCluster, namespace string, cm configMap) error {
	data, err := cm.data(&tc.Spec)
	if err != nil {
		return err
	}
	have, err := tenant.ReadConfigMap(ctx, r.configReader(), namespace, cm.name)
	if err != nil {
		return err
	}
	ours := have != nil && have.Labels[OwnerLabel] == tc.Name
	switch {
	case data == nil && ours:
		if err := r.Client.Delete(ctx, have); ctrlruntimeclient.IgnoreNotFound(err) != nil {
			return fmt.Errorf("failed to delete ConfigMap %s/%s: %w", namespace, cm.name, err)
		}
		return nil
	case data == nil:
		return nil
	case have != nil && !ours:
		return fmt.Errorf("ConfigMap %s/%s exists and was not written from this TenantCluster: delete it to manage the list here", namespace, cm.name)
	}
	want := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: cm.name,
			Labels: map[string]string{tenant.ManagedByLabel: tenant.ManagedByValue, OwnerLabel: tc.Name},
		},
		Data: data,
	}
	if err := cm.parse(want); err != nil {
		return err
	}
	if have == nil {
		if err := r.Client.Create(ctx, want); err != nil {
			return fmt.Errorf("failed to create ConfigMap %s/%s: %w", namespace, cm.name, err)
		}
		return nil
	}
	if maps.Equal(have.Data, data) && have.Labels[tenant.ManagedByLabel] == tenant.ManagedByValue {
		return nil
	}
	have = have.DeepCopy()
	have.Data = data
	have.Labels[tenant.ManagedByLabel] = tenant.ManagedByValue
	if err := r.Client.Update(ctx, have); err != nil {
		return fmt.Errorf("failed to update ConfigMap %s/%s: %w", namespace, cm.name, err)
	}
	return nil
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
