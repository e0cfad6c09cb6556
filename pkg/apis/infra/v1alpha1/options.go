package v1alpha1

import (
	"encoding/json"
	"fmt"
)

// OptionsAnnotation on a tenant namespace holds the JSON form of its
// TenantCluster's options; the controllers of the namespace read them from
// there, and a change of the options is a change of the namespace.
const OptionsAnnotation = "infra.kkp-kubevirt.io/options"

// OptionsOf returns the options recorded in annotations; none when the
// annotation is absent.
func OptionsOf(annotations map[string]string) (TenantClusterOptions, error) {
	var o TenantClusterOptions
	raw, ok := annotations[OptionsAnnotation]
	if !ok {
		return o, nil
	}
	if err := json.Unmarshal([]byte(raw), &o); err != nil {
		return TenantClusterOptions{}, fmt.Errorf("failed to parse annotation %s: %w", OptionsAnnotation, err)
	}
	return o, nil
}

// Annotation returns the value of OptionsAnnotation for o, or "" when
// nothing is switched.
func (o TenantClusterOptions) Annotation() (string, error) {
	if o == (TenantClusterOptions{}) {
		return "", nil
	}
	raw, err := json.Marshal(o)
	if err != nil {
		return "", fmt.Errorf("failed to encode the options: %w", err)
	}
	return string(raw), nil
}

// Off reports whether a switch turns its feature off.
func Off(b *bool) bool {
	return b != nil && !*b
}
