package networks

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// ConfigMapName is the ConfigMap in a tenant namespace that lists its
// networks: every key is a network name, every value a CNI configuration
// (a JSON object).
const ConfigMapName = "tenant-networks"

// Label marks the NetworkAttachmentDefinitions made from ConfigMapName,
// next to tenant.ManagedByLabel.
const Label = "kkp-kubevirt.io/tenant-network"

// NetworkAttachmentDefinitionGVK is Multus' NetworkAttachmentDefinition.
var NetworkAttachmentDefinitionGVK = schema.GroupVersionKind{Group: "k8s.cni.cncf.io", Version: "v1", Kind: "NetworkAttachmentDefinition"}

// Network is one tenant network.
type Network struct {
	// Name is the name of the NetworkAttachmentDefinition.
	Name string
	// Config is the CNI configuration, a JSON object.
	Config string
}

// ParseNetworks reads the networks of a ConfigMap, sorted by name. Every
// configuration is checked as Multus and the CNI library read it (see
// validateConfig); invalid entries are reported together, each by its key
// and field, and left out.
func ParseNetworks(cm *corev1.ConfigMap) ([]Network, error) {
	var out []Network
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(cm.Data)) {
		config := strings.TrimSpace(cm.Data[name])
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			problems = append(problems, fmt.Sprintf("network %q: invalid name: %s", name, strings.Join(errs, ", ")))
			continue
		}
		if err := validateConfig(config); err != nil {
			problems = append(problems, fmt.Sprintf("network %q: %v", name, err))
			continue
		}
		out = append(out, Network{Name: name, Config: config})
	}
	if len(problems) > 0 {
		return out, fmt.Errorf("invalid networks in ConfigMap %s/%s: %s", cm.Namespace, cm.Name, strings.Join(problems, "; "))
	}
	return out, nil
}

// attachment returns the NetworkAttachmentDefinition of a network.
func attachment(namespace string, n Network) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"config": n.Config}}}
	u.SetGroupVersionKind(NetworkAttachmentDefinitionGVK)
	u.SetNamespace(namespace)
	u.SetName(n.Name)
	u.SetLabels(map[string]string{tenant.ManagedByLabel: tenant.ManagedByValue, Label: "true"})
	return u
}
