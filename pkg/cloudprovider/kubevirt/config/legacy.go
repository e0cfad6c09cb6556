package config

import (
	"fmt"
	"reflect"
	"strings"

	"k8c.io/machine-controller/sdk/providerconfig"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// LegacyConfig is the flat cloudProviderSpec of KKP <= 2.20 (machine-controller
// before March 2022). Parse converts it to the nested RawConfig; each field
// keeps the type of its nested counterpart, which legacyPaths names and
// docs/provider-spec.md lists.
type LegacyConfig struct {
	ClusterName            providerconfig.ConfigVarString `json:"clusterName,omitempty"`
	Kubeconfig             providerconfig.ConfigVarString `json:"kubeconfig,omitempty"`
	CPUs                   providerconfig.ConfigVarString `json:"cpus,omitempty"`
	Memory                 providerconfig.ConfigVarString `json:"memory,omitempty"`
	Namespace              providerconfig.ConfigVarString `json:"namespace,omitempty"`
	SourceURL              providerconfig.ConfigVarString `json:"sourceURL,omitempty"`
	PVCSize                providerconfig.ConfigVarString `json:"pvcSize,omitempty"`
	StorageClassName       providerconfig.ConfigVarString `json:"storageClassName,omitempty"`
	DNSPolicy              providerconfig.ConfigVarString `json:"dnsPolicy,omitempty"`
	DNSConfig              *corev1.PodDNSConfig           `json:"dnsConfig,omitempty"`
	PodAffinityPreset      providerconfig.ConfigVarString `json:"podAffinityPreset,omitempty"`
	PodAntiAffinityPreset  providerconfig.ConfigVarString `json:"podAntiAffinityPreset,omitempty"`
	NodeAffinityPreset     NodeAffinityPreset             `json:"nodeAffinityPreset,omitempty"`
	NodeAntiAffinityPreset NodeAffinityPreset             `json:"nodeAntiAffinityPreset,omitempty"`
}

// clusterNameKey is the one key both formats share.
const clusterNameKey = "clusterName"

var (
	legacyFields = jsonFields(reflect.TypeFor[LegacyConfig]())
	nestedFields = jsonFields(reflect.TypeFor[RawConfig]())
)

// legacyPaths maps each converted field to the flat field it came from, so
// that errors about a converted spec name what the user wrote.
var legacyPaths = []struct{ nested, flat *field.Path }{
	{specPath.Child("auth", "kubeconfig"), specPath.Child("kubeconfig")},
	{specPath.Child("auth", "namespace"), specPath.Child("namespace")},
	{specPath.Child("virtualMachine", "template", "cpus"), specPath.Child("cpus")},
	{specPath.Child("virtualMachine", "template", "memory"), specPath.Child("memory")},
	{specPath.Child("virtualMachine", "template", "primaryDisk", "osImage"), specPath.Child("sourceURL")},
	{specPath.Child("virtualMachine", "template", "primaryDisk", "size"), specPath.Child("pvcSize")},
	{specPath.Child("virtualMachine", "template", "primaryDisk", "storageClassName"), specPath.Child("storageClassName")},
	{specPath.Child("virtualMachine", "dnsPolicy"), specPath.Child("dnsPolicy")},
	{specPath.Child("virtualMachine", "dnsConfig"), specPath.Child("dnsConfig")},
	{specPath.Child("affinity", "podAffinityPreset"), specPath.Child("podAffinityPreset")},
	{specPath.Child("affinity", "podAntiAffinityPreset"), specPath.Child("podAntiAffinityPreset")},
	{specPath.Child("affinity", "nodeAffinityPreset"), specPath.Child("nodeAffinityPreset")},
	{specPath.Child("affinity", "nodeAntiAffinityPreset"), specPath.Child("nodeAntiAffinityPreset")},
}

// classifyKeys returns the flat-only and nested-only keys present in obj, in
// the order of the struct fields.
func classifyKeys(obj map[string]any) (flat, nested []string) {
	present := func(fields []jsonField) []string {
		var names []string
		for _, f := range fields {
			if f.name == clusterNameKey {
				continue
			}
			for key := range obj {
				if strings.EqualFold(key, f.name) {
					names = append(names, f.name)
					break
				}
			}
		}
		return names
	}
	return present(legacyFields), present(nestedFields)
}

// parseLegacy decodes a flat cloudProviderSpec and converts it.
func parseLegacy(obj map[string]any, flat, nested []string) (RawConfig, []string, field.ErrorList) {
	if len(nested) > 0 {
		return RawConfig{}, nil, field.ErrorList{field.Forbidden(specPath, fmt.Sprintf(
			"the flat format of KKP <= 2.20 (fields: %s) cannot be mixed with the nested format (fields: %s); use only the nested format",
			strings.Join(flat, ", "), strings.Join(nested, ", ")))}
	}
	var legacy LegacyConfig
	warnings, errs := decodeStrict(specPath, obj, &legacy)
	if len(errs) > 0 {
		return RawConfig{}, warnings, errs
	}
	warnings = append(warnings, fmt.Sprintf(
		"cloudProviderSpec uses the flat format of KKP <= 2.20 (fields: %s); it was converted to the nested format, see docs/provider-spec.md",
		strings.Join(flat, ", ")))
	return convertLegacy(legacy), warnings, nil
}

// convertLegacy maps every flat field onto its nested counterpart.
func convertLegacy(l LegacyConfig) RawConfig {
	var raw RawConfig
	raw.ClusterName = l.ClusterName
	raw.Auth.Kubeconfig = l.Kubeconfig
	raw.Auth.Namespace = l.Namespace
	vm := &raw.VirtualMachine
	vm.Template.CPUs = l.CPUs
	vm.Template.Memory = l.Memory
	vm.Template.PrimaryDisk.OsImage = l.SourceURL
	vm.Template.PrimaryDisk.Size = l.PVCSize
	vm.Template.PrimaryDisk.StorageClassName = l.StorageClassName
	vm.DNSPolicy = l.DNSPolicy
	vm.DNSConfig = l.DNSConfig
	raw.Affinity = Affinity{
		PodAffinityPreset:      l.PodAffinityPreset,
		PodAntiAffinityPreset:  l.PodAntiAffinityPreset,
		NodeAffinityPreset:     l.NodeAffinityPreset,
		NodeAntiAffinityPreset: l.NodeAntiAffinityPreset,
	}
	return raw
}

// flatPath rewrites a nested field path of a converted spec into the flat
// path the user wrote; other paths are returned unchanged.
func flatPath(p string) string {
	for _, m := range legacyPaths {
		nested := m.nested.String()
		rest, ok := strings.CutPrefix(p, nested)
		if ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
			return m.flat.String() + rest
		}
	}
	return p
}

// flatWarning rewrites every nested path in a warning of a converted spec.
func flatWarning(w string) string {
	for _, m := range legacyPaths {
		w = strings.ReplaceAll(w, m.nested.String(), m.flat.String())
	}
	return w
}
