package infra

import (
	"fmt"

	kubevirtcorev1 "kubevirt.io/api/core/v1"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// NewScheme returns the scheme of infra clients: the built-in types, KubeVirt
// core v1, instancetype v1beta1 and CDI v1beta1. Kinds read only for their
// existence (instancetype v1alpha1, NetworkAttachmentDefinitions) are read
// as metav1.PartialObjectMetadata and need no Go type.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	adders := []struct {
		name string
		add  func(*runtime.Scheme) error
	}{
		{"built-in", clientgoscheme.AddToScheme},
		{"kubevirt.io/v1", kubevirtcorev1.AddToScheme},
		{"instancetype.kubevirt.io/v1beta1", instancetypev1beta1.AddToScheme},
		{"cdi.kubevirt.io/v1beta1", cdicorev1beta1.AddToScheme},
	}
	for _, a := range adders {
		if err := a.add(s); err != nil {
			return nil, fmt.Errorf("failed to add %s types to the scheme: %w", a.name, err)
		}
	}
	return s, nil
}
