package config

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	tolerationOperators = []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}
	taintEffects        = []corev1.TaintEffect{"", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}
)

// placement resolves virtualMachine.nodeSelector and .tolerations: the
// infra nodes a VM must run on and the taints it tolerates (dedicated,
// tainted infra nodes), checked as the API server checks a pod's.
func (rs *resolution) placement(s *Settings, p *field.Path, vm *VirtualMachine) {
	selectorPath := p.Child("nodeSelector")
	for _, key := range slices.Sorted(maps.Keys(vm.NodeSelector)) {
		rs.labelKey(selectorPath.Key(key), key)
		rs.labelValue(selectorPath.Key(key), vm.NodeSelector[key])
	}
	if len(vm.NodeSelector) > 0 {
		s.NodeSelector = maps.Clone(vm.NodeSelector)
	}
	for i := range vm.Tolerations {
		rs.toleration(p.Child("tolerations").Index(i), &vm.Tolerations[i])
		s.Tolerations = append(s.Tolerations, *vm.Tolerations[i].DeepCopy())
	}
}

// toleration checks one toleration: an empty key needs operator Exists,
// Exists takes no value, tolerationSeconds only goes with NoExecute.
func (rs *resolution) toleration(p *field.Path, t *corev1.Toleration) {
	if t.Key != "" {
		rs.labelKey(p.Child("key"), t.Key)
	}
	op := t.Operator
	if op == "" {
		op = corev1.TolerationOpEqual
	}
	if enum(rs, p.Child("operator"), op, tolerationOperators) {
		switch {
		case op == corev1.TolerationOpExists && t.Value != "":
			rs.add(field.Invalid(p.Child("value"), t.Value, "must be empty when operator is Exists"))
		case op == corev1.TolerationOpEqual && t.Key == "":
			rs.add(field.Invalid(p.Child("operator"), string(t.Operator), "must be Exists when key is empty"))
		case op == corev1.TolerationOpEqual:
			rs.labelValue(p.Child("value"), t.Value)
		}
	}
	enum(rs, p.Child("effect"), t.Effect, taintEffects)
	if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
		rs.add(field.Invalid(p.Child("tolerationSeconds"), *t.TolerationSeconds, "may only be set with effect NoExecute"))
	}
}
