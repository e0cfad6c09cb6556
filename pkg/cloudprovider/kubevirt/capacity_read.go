package kubevirt

import (
	"context"
	"fmt"

	kubevirtcorev1 "kubevirt.io/api/core/v1"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

var _ cloudprovider.CapacityProvider = &Provider{}

// TemplateCapacity returns the capacity of the Nodes of a Machine
// template (see cloudprovider.CapacityProvider). A template that sizes its
// VM itself is answered from the spec alone. A flavor's
// VirtualMachineInstancePreset fills what the template leaves unset, and
// an instancetype sizes the VM; both are read from the infra API server,
// not the cache: the watch event that leads here may be ahead of the
// provider's informers. A preset or instancetype the infra cluster lacks,
// and an instancetype KubeVirt infers from a volume, leave the CPU and
// memory unknown.
func (p *Provider) TemplateCapacity(ctx context.Context, spec clusterv1alpha1.MachineSpec) (cloudprovider.NodeCapacity, error) {
	settings, err := p.load(ctx, spec, nil)
	if err != nil {
		return cloudprovider.NodeCapacity{}, err
	}
	shape := templateShape(settings)
	named := settings.Instancetype != nil && settings.Instancetype.InferFromVolume == ""
	if settings.Flavor == "" && !named {
		return nodeCapacity(settings, shape), nil
	}
	t, err := p.targetFor(ctx, settings)
	if err != nil {
		return cloudprovider.NodeCapacity{}, err
	}
	if settings.Flavor != "" {
		preset := &kubevirtcorev1.VirtualMachineInstancePreset{}
		found, err := getIfExists(ctx, t.infra.Writer, ctrlruntimeclient.ObjectKey{Namespace: t.infra.Namespace, Name: settings.Flavor}, preset)
		if err != nil {
			return cloudprovider.NodeCapacity{}, err
		}
		if found {
			shape = withPreset(shape, presetShape(preset.Spec.Domain))
		}
	}
	if named {
		it, err := readInstancetype(ctx, t.infra.Writer, t.infra.Namespace, settings.Instancetype.Kind, settings.Instancetype.Name)
		if err != nil {
			return cloudprovider.NodeCapacity{}, err
		}
		if it != nil {
			shape = withInstancetype(shape, instancetypeShape(it))
		}
	}
	return nodeCapacity(settings, shape), nil
}

// CapacityObjects are the kinds TemplateCapacity reads, for a watch that
// tells when to ask again: VirtualMachineInstancePresets and both kinds of
// instancetypes, metadata only (their generation changes with the spec).
func CapacityObjects() []ctrlruntimeclient.Object {
	instancetypes := instancetypev1beta1.SchemeGroupVersion
	gvks := []schema.GroupVersionKind{
		presetGVK,
		instancetypes.WithKind(instancetypeKinds.namespaced),
		instancetypes.WithKind(instancetypeKinds.cluster),
	}
	out := make([]ctrlruntimeclient.Object, 0, len(gvks))
	for _, gvk := range gvks {
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(gvk)
		out = append(out, obj)
	}
	return out
}

// CapacityObjects implements cloudprovider.CapacityProvider.
func (p *Provider) CapacityObjects() []ctrlruntimeclient.Object {
	return CapacityObjects()
}

// readInstancetype returns the spec of the instancetype named name, nil
// when there is none. A requested kind is the only one read; without one
// the namespaced kind shadows the cluster-scoped one, as in lookupKind.
// Only instancetype.kubevirt.io/v1beta1 is read.
func readInstancetype(ctx context.Context, reader ctrlruntimeclient.Reader, namespace, requested, name string) (*instancetypev1beta1.VirtualMachineInstancetypeSpec, error) {
	if requested == "" || requested == instancetypeKinds.namespaced {
		it := &instancetypev1beta1.VirtualMachineInstancetype{}
		found, err := getIfExists(ctx, reader, ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: name}, it)
		if err != nil || found {
			return &it.Spec, err
		}
	}
	if requested == "" || requested == instancetypeKinds.cluster {
		it := &instancetypev1beta1.VirtualMachineClusterInstancetype{}
		found, err := getIfExists(ctx, reader, ctrlruntimeclient.ObjectKey{Name: name}, it)
		if err != nil || found {
			return &it.Spec, err
		}
	}
	return nil, nil
}

// getIfExists reads obj and tells whether it exists; a kind the API server
// does not serve counts as not existing.
func getIfExists(ctx context.Context, reader ctrlruntimeclient.Reader, key ctrlruntimeclient.ObjectKey, obj ctrlruntimeclient.Object) (bool, error) {
	err := reader.Get(ctx, key, obj)
	switch {
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("failed to get %T %s: %w", obj, key, err)
	}
	return true, nil
}
