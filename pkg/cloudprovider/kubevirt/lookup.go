package kubevirt

import (
	"context"
	"fmt"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// Kinds read only for their existence, as metadata.
var (
	presetGVK = kubevirtcorev1.SchemeGroupVersion.WithKind("VirtualMachineInstancePreset")
	nadGVK    = schema.GroupVersionKind{Group: "k8s.cni.cncf.io", Version: "v1", Kind: "NetworkAttachmentDefinition"}
	dvGVK     = schema.GroupVersionKind{Group: "cdi.kubevirt.io", Version: "v1beta1", Kind: "DataVolume"}
)

// instancetypeGroup serves instancetypes and preferences; instancetypeVersions
// are tried in order.
const instancetypeGroup = "instancetype.kubevirt.io"

var instancetypeVersions = []string{"v1beta1", "v1alpha1"}

// kindFamily is a namespaced kind and its cluster-scoped twin.
type kindFamily struct {
	namespaced, cluster string
}

var (
	instancetypeKinds = kindFamily{namespaced: "VirtualMachineInstancetype", cluster: "VirtualMachineClusterInstancetype"}
	preferenceKinds   = kindFamily{namespaced: "VirtualMachinePreference", cluster: "VirtualMachineClusterPreference"}
)

// lookupKind returns the kind under which an instancetype or preference
// named name exists, or "" when it does not. A requested kind is the only
// one tried; without one the namespaced kind is tried first, so a
// namespaced object shadows a cluster-scoped one of the same name (as
// KubeVirt's own defaulting does). Each kind is tried in v1beta1, then
// v1alpha1; versions the infra cluster does not serve count as not found.
func lookupKind(ctx context.Context, reader ctrlruntimeclient.Reader, namespace string, family kindFamily, requested, name string) (string, error) {
	kinds := []string{family.namespaced, family.cluster}
	if requested != "" {
		kinds = []string{requested}
	}
	for _, kind := range kinds {
		key := ctrlruntimeclient.ObjectKey{Name: name}
		if kind == family.namespaced {
			key.Namespace = namespace
		}
		for _, version := range instancetypeVersions {
			gvk := schema.GroupVersionKind{Group: instancetypeGroup, Version: version, Kind: kind}
			found, err := exists(ctx, reader, gvk, key)
			if err != nil {
				return "", err
			}
			if found {
				return kind, nil
			}
		}
	}
	return "", nil
}

// exists reports whether an object exists, reading only its metadata.
func exists(ctx context.Context, reader ctrlruntimeclient.Reader, gvk schema.GroupVersionKind, key ctrlruntimeclient.ObjectKey) (bool, error) {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(gvk)
	err := reader.Get(ctx, key, obj)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("failed to get %s %s: %w", gvk.Kind, key, err)
	}
	return true, nil
}
