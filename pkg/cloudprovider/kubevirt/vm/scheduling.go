package vm

import (
	"slices"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// hostnameTopologyKey spreads or groups VMs by infra node.
	hostnameTopologyKey = "kubernetes.io/hostname"
	// presetWeight is the weight of every soft preset.
	presetWeight int32 = 1
)

// buildAffinity returns the affinity of the VM template, or nil when no
// preset and no explicit location applies. md is the value of the
// LabelMachineDeployment label the pod presets select on.
func buildAffinity(s *config.Settings, f Facts, md string) *corev1.Affinity {
	affinity := &corev1.Affinity{
		NodeAffinity:    nodeAffinity(s, f),
		PodAffinity:     podAffinity(s.Affinity.PodAffinity, md),
		PodAntiAffinity: podAntiAffinity(s.Affinity.PodAntiAffinity, md),
	}
	if affinity.NodeAffinity == nil && affinity.PodAffinity == nil && affinity.PodAntiAffinity == nil {
		return nil
	}
	return affinity
}

// nodeAffinity returns the node affinity of the node presets and of the
// explicit location, or nil. Hard expressions are ANDed in one required
// term; each soft preset becomes one preferred term. Region and zone derived
// from the storage class are labels only: they do not constrain scheduling.
func nodeAffinity(s *config.Settings, f Facts) *corev1.NodeAffinity {
	var required []corev1.NodeSelectorRequirement
	var preferred []corev1.PreferredSchedulingTerm

	presets := []struct {
		preset config.NodePreset
		anti   bool
	}{
		{preset: s.Affinity.NodeAffinity},
		{preset: s.Affinity.NodeAntiAffinity, anti: true},
	}
	for _, p := range presets {
		expr := nodePresetRequirement(p.preset, p.anti)
		switch p.preset.Type {
		case config.AffinityHard:
			required = append(required, expr)
		case config.AffinitySoft:
			preferred = append(preferred, corev1.PreferredSchedulingTerm{
				Weight:     presetWeight,
				Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{expr}},
			})
		}
	}
	terms := [][]corev1.NodeSelectorRequirement{required}
	terms = withLocation(terms, LabelRegion, s.Region)
	terms = withLocation(terms, LabelZone, firstNonEmpty(f.SpreadZone, s.Zone))

	if len(terms[0]) == 0 && len(preferred) == 0 {
		return nil
	}
	out := &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: preferred}
	if len(terms[0]) > 0 {
		out.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
		for _, t := range terms {
			out.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = append(
				out.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms, corev1.NodeSelectorTerm{MatchExpressions: t})
		}
	}
	return out
}

// DefaultLocation is the region or zone name that targets infra nodes
// belonging to no region or zone: those without the topology label (or
// with this literal value), for infra clusters that are not region and
// zone aware.
const DefaultLocation = "default"

// withLocation pins the topology label key to value in every required
// term (alternatives ORed by the scheduler). DefaultLocation doubles the
// terms: one where the label does not exist, one where it is "default".
func withLocation(terms [][]corev1.NodeSelectorRequirement, key, value string) [][]corev1.NodeSelectorRequirement {
	if value == "" {
		return terms
	}
	pinned := locationRequirement(key, value)
	if value != DefaultLocation {
		for i := range terms {
			terms[i] = append(terms[i], pinned)
		}
		return terms
	}
	absent := corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpDoesNotExist}
	out := make([][]corev1.NodeSelectorRequirement, 0, 2*len(terms))
	for _, t := range terms {
		out = append(out, append(slices.Clone(t), absent), append(slices.Clone(t), pinned))
	}
	return out
}

// nodePresetRequirement returns the expression of a node preset: In or
// Exists for affinity, NotIn or DoesNotExist for anti-affinity.
func nodePresetRequirement(p config.NodePreset, anti bool) corev1.NodeSelectorRequirement {
	expr := corev1.NodeSelectorRequirement{Key: p.Key, Values: slices.Clone(p.Values)}
	switch {
	case anti && len(p.Values) > 0:
		expr.Operator = corev1.NodeSelectorOpNotIn
	case anti:
		expr.Operator = corev1.NodeSelectorOpDoesNotExist
	case len(p.Values) > 0:
		expr.Operator = corev1.NodeSelectorOpIn
	default:
		expr.Operator = corev1.NodeSelectorOpExists
	}
	return expr
}

// locationRequirement pins a topology label to one value.
func locationRequirement(key, value string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{value}}
}

// podAffinity co-locates the VMs of a MachineDeployment on infra nodes, or
// returns nil.
func podAffinity(t config.AffinityType, md string) *corev1.PodAffinity {
	required, preferred := podAffinityTerms(t, md)
	if required == nil && preferred == nil {
		return nil
	}
	return &corev1.PodAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution:  required,
		PreferredDuringSchedulingIgnoredDuringExecution: preferred,
	}
}

// podAntiAffinity spreads the VMs of a MachineDeployment over infra nodes,
// or returns nil.
func podAntiAffinity(t config.AffinityType, md string) *corev1.PodAntiAffinity {
	required, preferred := podAffinityTerms(t, md)
	if required == nil && preferred == nil {
		return nil
	}
	return &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution:  required,
		PreferredDuringSchedulingIgnoredDuringExecution: preferred,
	}
}

// podAffinityTerms returns the one required (hard) or preferred (soft) term
// of a pod preset that selects the VMs of the MachineDeployment by host.
func podAffinityTerms(t config.AffinityType, md string) ([]corev1.PodAffinityTerm, []corev1.WeightedPodAffinityTerm) {
	term := corev1.PodAffinityTerm{
		LabelSelector: mdSelector(md),
		TopologyKey:   hostnameTopologyKey,
	}
	switch t {
	case config.AffinityHard:
		return []corev1.PodAffinityTerm{term}, nil
	case config.AffinitySoft:
		return nil, []corev1.WeightedPodAffinityTerm{{Weight: presetWeight, PodAffinityTerm: term}}
	default:
		return nil, nil
	}
}

// topologySpreadConstraints returns the user's constraints, each selecting
// the VMs of the MachineDeployment, or the default one that spreads them
// over infra nodes when possible. A pod affinity preset asks for the
// opposite of that default, so with one there is no default: kube-scheduler
// weighs a soft preset and the default spread alike, and they would cancel.
func topologySpreadConstraints(s *config.Settings, md string) []corev1.TopologySpreadConstraint {
	spreads := s.TopologySpreadConstraints
	if len(spreads) == 0 {
		if s.Affinity.PodAffinity != config.AffinityNone {
			return nil
		}
		return []corev1.TopologySpreadConstraint{{
			MaxSkew:           1,
			TopologyKey:       hostnameTopologyKey,
			WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector:     mdSelector(md),
		}}
	}
	out := make([]corev1.TopologySpreadConstraint, 0, len(spreads))
	for _, s := range spreads {
		out = append(out, corev1.TopologySpreadConstraint{
			MaxSkew:           s.MaxSkew,
			TopologyKey:       s.TopologyKey,
			WhenUnsatisfiable: s.WhenUnsatisfiable,
			LabelSelector:     mdSelector(md),
		})
	}
	return out
}

// mdSelector selects the VMs of one MachineDeployment.
func mdSelector(md string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{LabelMachineDeployment: md}}
}
