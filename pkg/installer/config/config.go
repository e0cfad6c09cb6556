package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/strvals"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/filelimit"
)

// File format identifiers.
const (
	APIVersion = "installer.kubevirt-kkp.io/v1alpha1"
	Kind       = "InstallerConfiguration"
)

// Configuration is what the installer installs and how.
type Configuration struct {
	// APIVersion must be APIVersion.
	APIVersion string `json:"apiVersion"`
	// Kind must be Kind.
	Kind string `json:"kind"`
	// Skip names components not to install, for example multus and
	// cni-plugins on a cluster that already has them.
	Skip []string `json:"skip,omitempty"`
	// Values are chart values by component name.
	Values map[string]map[string]any `json:"values,omitempty"`
	// KVMNodeLabels are "key=value" node labels that mark KVM-capable nodes
	// for the preflight check.
	KVMNodeLabels []string `json:"kvmNodeLabels,omitempty"`
}

// New returns an empty configuration.
func New() *Configuration {
	return &Configuration{APIVersion: APIVersion, Kind: Kind, Values: map[string]map[string]any{}}
}

// MaxFileSize bounds a configuration file; one with the values of every
// chart spelled out takes a few dozen KiB.
const MaxFileSize = 4 << 20

// Load reads a configuration file of at most MaxFileSize bytes. Unknown
// fields are errors.
func Load(path string) (*Configuration, error) {
	data, err := filelimit.ReadFile(path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("failed to read configuration: %w", err)
	}
	cfg := New()
	if err := yaml.UnmarshalStrict(data, cfg); err != nil {
		return nil, fmt.Errorf("failed to parse configuration %s: %w", path, err)
	}
	if cfg.APIVersion != APIVersion || cfg.Kind != Kind {
		return nil, fmt.Errorf("configuration %s is a %s %s, want %s %s", path, cfg.APIVersion, cfg.Kind, APIVersion, Kind)
	}
	if cfg.Values == nil {
		cfg.Values = map[string]map[string]any{}
	}
	return cfg, nil
}

// Validate checks that every component named is one of known and that
// every KVM node label is a valid key=value label. It reports every problem.
func (c *Configuration) Validate(known []string) error {
	var errs []error
	for _, s := range c.Skip {
		if !slices.Contains(known, s) {
			errs = append(errs, fmt.Errorf("skip: unknown component %q (known: %v)", s, known))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Values)) {
		if !slices.Contains(known, name) {
			errs = append(errs, fmt.Errorf("values: unknown component %q (known: %v)", name, known))
		}
	}
	for _, l := range c.KVMNodeLabels {
		if err := checkLabel(l); err != nil {
			errs = append(errs, fmt.Errorf("kvmNodeLabels (--kvm-node-label): %w", err))
		}
	}
	return errors.Join(errs...)
}

// checkLabel checks that kv is key=value with a valid label key and value.
func checkLabel(kv string) error {
	key, value, ok := strings.Cut(kv, "=")
	if !ok {
		return fmt.Errorf("%q is not key=value", kv)
	}
	msgs := append(validation.IsQualifiedName(key), validation.IsValidLabelValue(value)...)
	if len(msgs) > 0 {
		return fmt.Errorf("%q is not a valid node label: %s", kv, strings.Join(msgs, "; "))
	}
	return nil
}

// Merge deep-merges values into the values of component; values win.
func (c *Configuration) Merge(component string, values map[string]any) {
	if c.Values == nil {
		c.Values = map[string]map[string]any{}
	}
	c.Values[component] = mergeMaps(c.Values[component], values)
}

// Set applies a --set expression, "component.path=value[,component.path=value]",
// with Helm's --set syntax.
func (c *Configuration) Set(expr string) error {
	parsed := map[string]any{}
	if err := strvals.ParseInto(expr, parsed); err != nil {
		return fmt.Errorf("failed to parse --set %q: %w", expr, err)
	}
	for component, v := range parsed {
		values, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("--set %q: a value must be under a component, as in kubevirt.useEmulation=true", expr)
		}
		c.Merge(component, values)
	}
	return nil
}

// Lookup returns the value at a path of a component's values.
func (c *Configuration) Lookup(component string, path ...string) (any, bool) {
	var cur any = c.Values[component]
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// mergeMaps returns dst with src merged in, recursively for maps.
func mergeMaps(dst, src map[string]any) map[string]any {
	out := make(map[string]any, len(dst)+len(src))
	for k, v := range dst {
		out[k] = v
	}
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := out[k].(map[string]any); ok {
				out[k] = mergeMaps(dm, sm)
				continue
			}
		}
		out[k] = v
	}
	return out
}
