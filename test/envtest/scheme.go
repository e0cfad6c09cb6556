package envtest

import (
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	kubevirtcorev1 "kubevirt.io/api/core/v1"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
)

// NewScheme returns a scheme with the built-in types and the typed CRDs of
// test/crds: KubeVirt core and instancetype v1beta1, CDI v1beta1,
// cluster.k8s.io v1alpha1 and our infra.kkp-kubevirt.io v1alpha1. Kinds without Go types here (instancetype
// v1alpha1, NetworkAttachmentDefinition) are reached as unstructured objects.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for name, add := range map[string]func(*runtime.Scheme) error{
		"client-go":             clientgoscheme.AddToScheme,
		"kubevirt.io":           kubevirtcorev1.AddToScheme,
		"instancetype.kubevirt": instancetypev1beta1.AddToScheme,
		"cdi.kubevirt.io":       cdicorev1beta1.AddToScheme,
		"cluster.k8s.io":        clusterv1alpha1.AddToScheme,
		"infra.kkp-kubevirt.io": infrav1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("failed to add %s types to the scheme: %w", name, err)
		}
	}
	return s, nil
}
