package config

import (
	"fmt"
	"strings"

	"k8c.io/machine-controller/sdk/providerconfig"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	affinityTypes       = []AffinityType{AffinityNone, AffinitySoft, AffinityHard}
	unsatisfiableValues = []corev1.UnsatisfiableConstraintAction{corev1.DoNotSchedule, corev1.ScheduleAnyway}
)

// affinity resolves the scheduling presets. Upstream ignores the pod
// presets since 2022; this provider honours them.
func (rs *resolution) affinity(s *Settings, a *Affinity) {
	p := specPath.Child("affinity")
	s.Affinity.PodAffinity = rs.affinityType(p.Child("podAffinityPreset"), a.PodAffinityPreset)
	antiPath := p.Child("podAntiAffinityPreset")
	s.Affinity.PodAntiAffinity = rs.affinityType(antiPath, a.PodAntiAffinityPreset)
	if s.Affinity.PodAffinity != AffinityNone && s.Affinity.PodAntiAffinity != AffinityNone {
		rs.add(field.Forbidden(antiPath, "podAffinityPreset and podAntiAffinityPreset are mutually exclusive; set at most one of them"))
	}
	s.Affinity.NodeAffinity = rs.nodePreset(p.Child("nodeAffinityPreset"), &a.NodeAffinityPreset)
	s.Affinity.NodeAntiAffinity = rs.nodePreset(p.Child("nodeAntiAffinityPreset"), &a.NodeAntiAffinityPreset)
}

// affinityType resolves "", soft or hard, ignoring case as upstream does.
func (rs *resolution) affinityType(p *field.Path, cv providerconfig.ConfigVarString) AffinityType {
	v := rs.str(p, cv)
	t := AffinityType(strings.ToLower(v))
	if !containsValue(affinityTypes, t) {
		rs.add(field.NotSupported(p, v, affinityTypes))
		return AffinityNone
	}
	return t
}

// nodePreset resolves a node (anti-)affinity preset. A preset without a
// type is disabled, and its key and values are ignored.
func (rs *resolution) nodePreset(p *field.Path, preset *NodeAffinityPreset) NodePreset {
	t := rs.affinityType(p.Child("type"), preset.Type)
	if t == AffinityNone {
		return NodePreset{}
	}
	out := NodePreset{Type: t}
	keyPath := p.Child("key")
	if out.Key = rs.str(keyPath, preset.Key); out.Key == "" {
		rs.add(field.Required(keyPath, "the infra node label key to match"))
	} else {
		rs.labelKey(keyPath, out.Key)
	}
	for i, cv := range preset.Values {
		valuePath := p.Child("values").Index(i)
		v := rs.str(valuePath, cv)
		rs.labelValue(valuePath, v)
		out.Values = append(out.Values, v)
	}
	return out
}

// topologySpread resolves the topology spread constraints.
func (rs *resolution) topologySpread(s *Settings, constraints []TopologySpreadConstraint) {
	p := specPath.Child("topologySpreadConstraints")
	seen := map[string]int{}
	for i, c := range constraints {
		cp := p.Index(i)
		out := TopologySpread{MaxSkew: 1, WhenUnsatisfiable: corev1.ScheduleAnyway}
		skewPath := cp.Child("maxSkew")
		if v := rs.str(skewPath, c.MaxSkew); v != "" {
			if n, ok := rs.parseInt32(skewPath, v, 1); ok {
				out.MaxSkew = n
			}
		}
		keyPath := cp.Child("topologyKey")
		if out.TopologyKey = rs.str(keyPath, c.TopologyKey); out.TopologyKey == "" {
			rs.add(field.Required(keyPath, "an infra node label key such as kubernetes.io/hostname"))
		} else {
			rs.labelKey(keyPath, out.TopologyKey)
		}
		whenPath := cp.Child("whenUnsatisfiable")
		if when := corev1.UnsatisfiableConstraintAction(rs.str(whenPath, c.WhenUnsatisfiable)); when != "" {
			enum(rs, whenPath, when, unsatisfiableValues)
			out.WhenUnsatisfiable = when
		}
		pair := out.TopologyKey + "\x00" + string(out.WhenUnsatisfiable)
		if first, dup := seen[pair]; dup && out.TopologyKey != "" {
			rs.add(field.Invalid(keyPath, out.TopologyKey,
				fmt.Sprintf("duplicates topologySpreadConstraints[%d]: each topologyKey and whenUnsatisfiable pair may appear once", first)))
		} else {
			seen[pair] = i
		}
		s.TopologySpreadConstraints = append(s.TopologySpreadConstraints, out)
	}
}
