package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/config"
)

// The values the charts allow for the enum flags; TestEnumFlagsMatchTheCharts
// keeps them in step with the charts' values.schema.json.
var (
	pullPolicies        = []string{"Always", "IfNotPresent", "Never"}
	uninstallStrategies = []string{"RemoveWorkloads", "BlockUninstallIfWorkloadsExist"}
)

// plan validates every flag and the values of every selected component
// before anything is contacted or written, and returns the configuration and
// the releases to install. The error lists every problem at once; extra are
// problems the caller found in its own flags.
func (g *globalOptions) plan(values *valueFlags, relocation *relocationFlags, extra ...error) (*config.Configuration, []components.Release, error) {
	errs := append([]error{g.validate()}, extra...)
	cfg, err := values.configuration()
	errs = append(errs, err)
	if cfg == nil {
		return nil, nil, refuse(errs)
	}
	known := components.Names(components.Default())
	errs = append(errs, cfg.Validate(known))
	// An unknown component to skip is reported above; the values of the
	// others are still checked.
	selection := *cfg
	selection.Skip = slices.DeleteFunc(slices.Clone(cfg.Skip), func(s string) bool { return !slices.Contains(known, s) })
	releases, err := relocation.releases(&selection)
	if err != nil {
		return nil, nil, refuse(append(errs, err))
	}
	errs = append(errs, installer.Validate(releases, cfg.Values))
	if errors.Join(errs...) != nil {
		return nil, nil, refuse(errs)
	}
	return cfg, releases, nil
}

func refuse(errs []error) error {
	return fmt.Errorf("the configuration is refused, nothing was done:\n%w", errors.Join(errs...))
}

// checkFlags checks the named value flags that were given and returns the
// error of each refused one by flag name.
func (v *valueFlags) checkFlags() map[string]error {
	checks := map[string]func() []string{
		"image-pull-policy":           func() []string { return oneOf(v.imagePullPolicy, pullPolicies) },
		"uninstall-strategy":          func() []string { return oneOf(v.uninstallStrategy, uninstallStrategies) },
		"image-pull-secret":           func() []string { return names(validation.IsDNS1123Subdomain, v.imagePullSecrets...) },
		"monitor-namespace":           func() []string { return names(validation.IsDNS1123Label, nonEmpty(v.monitorNamespace)...) },
		"monitor-account":             func() []string { return names(validation.IsDNS1123Subdomain, nonEmpty(v.monitorAccount)...) },
		"scratch-space-storage-class": func() []string { return names(validation.IsDNS1123Subdomain, nonEmpty(v.scratchStorageClass)...) },
		"workload-node-selector":      func() []string { return labels(v.workloadNodeSelector) },
		"infra-node-selector":         func() []string { return labels(v.infraNodeSelector) },
	}
	refused := map[string]error{}
	for name, check := range checks {
		if !v.changed(name) {
			continue
		}
		if msgs := check(); len(msgs) > 0 {
			refused[name] = fmt.Errorf("--%s: %s", name, strings.Join(msgs, "; "))
		}
	}
	return refused
}

// sortedErrors returns the errors of refused ordered by flag name.
func sortedErrors(refused map[string]error) []error {
	errs := make([]error, 0, len(refused))
	for _, f := range slices.Sorted(maps.Keys(refused)) {
		errs = append(errs, refused[f])
	}
	return errs
}

func oneOf(value string, allowed []string) []string {
	if slices.Contains(allowed, value) {
		return nil
	}
	return []string{fmt.Sprintf("%q is not one of %s", value, strings.Join(allowed, ", "))}
}

// nonEmpty is the value of a flag where empty means unset.
func nonEmpty(v string) []string {
	if v == "" {
		return nil
	}
	return []string{v}
}

// names checks each value with check, a Kubernetes name rule.
func names(check func(string) []string, values ...string) []string {
	var msgs []string
	for _, v := range values {
		for _, m := range check(v) {
			msgs = append(msgs, fmt.Sprintf("%q: %s", v, m))
		}
	}
	return msgs
}

// labels checks a node selector's keys and values.
func labels(selector map[string]string) []string {
	var msgs []string
	for k, v := range selector {
		for _, m := range append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...) {
			msgs = append(msgs, fmt.Sprintf("%s=%s: %s", k, v, m))
		}
	}
	sort.Strings(msgs)
	return msgs
}
