package webhook

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/ownership"

	"k8c.io/machine-controller/sdk/apis/cluster/common"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateDeploymentSpec checks what a MachineDeployment's controller relies
// on: a selector that is not empty and matches the template's labels,
// replicas >= 0, the RollingUpdate strategy and its limits, and the
// template's kubelet version.
func validateDeploymentSpec(spec *clusterv1alpha1.MachineDeploymentSpec) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := validateSetSpec(spec.Replicas, func() error {
		_, err := ownership.Selector(&spec.Selector, spec.Template.Labels)
		return err
	})
	errs = append(errs, validateStrategy(specPath.Child("strategy"), spec.Strategy)...)
	return append(errs, validateKubelet(templatePath.Child("spec"), spec.Template.Spec.Versions.Kubelet)...)
}

// validateMachineSetSpec checks a MachineSet's selector, replicas and
// kubelet version.
func validateMachineSetSpec(spec *clusterv1alpha1.MachineSetSpec) field.ErrorList {
	errs := validateSetSpec(spec.Replicas, func() error {
		_, err := ownership.Selector(&spec.Selector, spec.Template.Labels)
		return err
	})
	return append(errs, validateKubelet(templatePath.Child("spec"), spec.Template.Spec.Versions.Kubelet)...)
}

// templatePath is the field path of an owner's Machine template.
var templatePath = field.NewPath("spec", "template")

// validateSetSpec checks replicas and the selector (through selectorErr,
// which is ownership.Selector's verdict).
func validateSetSpec(replicas *int32, selectorErr func() error) field.ErrorList {
	var errs field.ErrorList
	if replicas != nil && *replicas < 0 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "replicas"), *replicas, "must be greater than or equal to 0"))
	}
	if err := selectorErr(); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec", "selector"), omit, err.Error()))
	}
	return errs
}

// validateStrategy checks the strategy type and the rolling update limits:
// each an integer >= 0 or a percentage, not both zero, maxUnavailable at
// most 100%.
func validateStrategy(path *field.Path, s *clusterv1alpha1.MachineDeploymentStrategy) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	if s.Type != "" && s.Type != common.RollingUpdateMachineDeploymentStrategyType {
		errs = append(errs, field.NotSupported(path.Child("type"), s.Type,
			[]common.MachineDeploymentStrategyType{common.RollingUpdateMachineDeploymentStrategyType}))
	}
	if s.RollingUpdate == nil {
		return errs
	}
	rollingPath := path.Child("rollingUpdate")
	surge, surgeErrs := limit(rollingPath.Child("maxSurge"), s.RollingUpdate.MaxSurge)
	unavailable, unavailableErrs := limit(rollingPath.Child("maxUnavailable"), s.RollingUpdate.MaxUnavailable)
	errs = append(errs, surgeErrs...)
	errs = append(errs, unavailableErrs...)
	if len(surgeErrs)+len(unavailableErrs) > 0 {
		return errs
	}
	if s.RollingUpdate.MaxUnavailable != nil && s.RollingUpdate.MaxUnavailable.Type == intstr.String && unavailable > 100 {
		errs = append(errs, field.Invalid(rollingPath.Child("maxUnavailable"), s.RollingUpdate.MaxUnavailable.String(), "must not be greater than 100%"))
	}
	if s.RollingUpdate.MaxSurge != nil && s.RollingUpdate.MaxUnavailable != nil && surge == 0 && unavailable == 0 {
		errs = append(errs, field.Invalid(rollingPath.Child("maxUnavailable"), s.RollingUpdate.MaxUnavailable.String(), "may not be 0 when maxSurge is 0"))
	}
	return errs
}

// limit returns the value of a maxSurge or maxUnavailable (an integer, or
// the number of a percentage) and its errors; an unset limit is 1.
func limit(path *field.Path, v *intstr.IntOrString) (int, field.ErrorList) {
	if v == nil {
		return 1, nil
	}
	if v.Type == intstr.String {
		digits, isPercent := strings.CutSuffix(v.StrVal, "%")
		n, err := strconv.Atoi(digits)
		if !isPercent || err != nil {
			return 0, field.ErrorList{field.Invalid(path, v.StrVal, `must be an integer or a percentage, e.g. "25%"`)}
		}
		if n < 0 {
			return 0, field.ErrorList{field.Invalid(path, v.StrVal, "must be greater than or equal to 0")}
		}
		return n, nil
	}
	if v.IntVal < 0 {
		return 0, field.ErrorList{field.Invalid(path, v.IntVal, "must be greater than or equal to 0")}
	}
	return int(v.IntVal), nil
}

// validateKubelet checks that versions.kubelet is set and a semantic
// version.
func validateKubelet(specPath *field.Path, version string) field.ErrorList {
	path := specPath.Child("versions", "kubelet")
	if version == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	if _, err := semver.StrictNewVersion(trimV(version)); err != nil {
		return field.ErrorList{field.Invalid(path, version, fmt.Sprintf("must be a semantic version: %v", err))}
	}
	return nil
}

// kubeletAllowed checks a kubelet version against the operator's
// constraint (Kubermatic's -kubernetes-version-constraints); a version
// that does not parse is validateKubelet's to refuse.
func kubeletAllowed(path *field.Path, version string, constraints *semver.Constraints) field.ErrorList {
	if constraints == nil {
		return nil
	}
	v, err := semver.StrictNewVersion(trimV(version))
	if err != nil || constraints.Check(v) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, version, fmt.Sprintf("must meet the kubelet version constraint %q of this webhook", constraints.String()))}
}

// trimV drops a leading "v" ("v1.33.4" is as valid as "1.33.4").
func trimV(version string) string {
	if len(version) > 1 && version[0] == 'v' {
		return version[1:]
	}
	return version
}

// omit hides a value in a field error.
var omit = field.OmitValueType{}
