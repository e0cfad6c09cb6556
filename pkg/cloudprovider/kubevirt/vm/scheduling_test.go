package vm

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestBuildAffinity(t *testing.T) {
	mdTerm := corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"md": "worker"}},
		TopologyKey:   "kubernetes.io/hostname",
	}
	in := func(key string, values ...string) corev1.NodeSelectorRequirement {
		op := corev1.NodeSelectorOpIn
		if len(values) == 0 {
			op = corev1.NodeSelectorOpExists
		}
		return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
	}
	absent := func(key string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpDoesNotExist}
	}
	required := func(exprs ...corev1.NodeSelectorRequirement) *corev1.NodeSelector {
		return &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: exprs}}}
	}
	preferred := func(expr corev1.NodeSelectorRequirement) corev1.PreferredSchedulingTerm {
		return corev1.PreferredSchedulingTerm{Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{expr}}}
	}

	tests := []struct {
		name     string
		affinity config.AffinitySettings
		region   string
		zone     string
		facts    Facts
		want     *corev1.Affinity
	}{
		{
			name: "nothing applies",
			want: nil,
		},
		{
			name:  "storage class topology facts do not constrain scheduling",
			facts: Facts{Region: "eu", Zone: "eu-1"},
			want:  nil,
		},
		{
			name:     "node affinity hard with values",
			affinity: config.AffinitySettings{NodeAffinity: config.NodePreset{Type: config.AffinityHard, Key: "foo", Values: []string{"bar"}}},
			want:     &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required(in("foo", "bar"))}},
		},
		{
			name:     "node affinity soft without values",
			affinity: config.AffinitySettings{NodeAffinity: config.NodePreset{Type: config.AffinitySoft, Key: "foo"}},
			want: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{preferred(in("foo"))},
			}},
		},
		{
			name: "node anti-affinity hard without values",
			affinity: config.AffinitySettings{
				NodeAntiAffinity: config.NodePreset{Type: config.AffinityHard, Key: "gpu"},
			},
			want: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: required(corev1.NodeSelectorRequirement{Key: "gpu", Operator: corev1.NodeSelectorOpDoesNotExist}),
			}},
		},
		{
			name: "node anti-affinity soft with values",
			affinity: config.AffinitySettings{
				NodeAntiAffinity: config.NodePreset{Type: config.AffinitySoft, Key: "foo", Values: []string{"bar1", "bar2"}},
			},
			want: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
					preferred(corev1.NodeSelectorRequirement{Key: "foo", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"bar1", "bar2"}}),
				},
			}},
		},
		{
			name: "hard presets and location share one required term",
			affinity: config.AffinitySettings{
				NodeAffinity:     config.NodePreset{Type: config.AffinityHard, Key: "foo", Values: []string{"bar"}},
				NodeAntiAffinity: config.NodePreset{Type: config.AffinityHard, Key: "maintenance"},
			},
			region: "eu",
			zone:   "eu-1",
			facts:  Facts{Region: "ignored", Zone: "ignored"},
			want: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: required(
					in("foo", "bar"),
					corev1.NodeSelectorRequirement{Key: "maintenance", Operator: corev1.NodeSelectorOpDoesNotExist},
					in(LabelRegion, "eu"),
					in(LabelZone, "eu-1"),
				),
			}},
		},
		{
			name: "two soft node presets give two preferred terms",
			affinity: config.AffinitySettings{
				NodeAffinity:     config.NodePreset{Type: config.AffinitySoft, Key: "foo", Values: []string{"bar"}},
				NodeAntiAffinity: config.NodePreset{Type: config.AffinitySoft, Key: "foo", Values: []string{"baz"}},
			},
			want: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
					preferred(in("foo", "bar")),
					preferred(corev1.NodeSelectorRequirement{Key: "foo", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"baz"}}),
				},
			}},
		},
		{
			name:  "spread zone overrides the explicit zone",
			zone:  "eu-1",
			facts: Facts{SpreadZone: "eu-2"},
			want:  &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required(in(LabelZone, "eu-2"))}},
		},
		{
			name:     "default region targets nodes without a region, alongside other required expressions",
			affinity: config.AffinitySettings{NodeAffinity: config.NodePreset{Type: config.AffinityHard, Key: "foo", Values: []string{"bar"}}},
			region:   DefaultLocation,
			zone:     "eu-1",
			want: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{
					{MatchExpressions: []corev1.NodeSelectorRequirement{in("foo", "bar"), absent(LabelRegion), in(LabelZone, "eu-1")}},
					{MatchExpressions: []corev1.NodeSelectorRequirement{in("foo", "bar"), in(LabelRegion, DefaultLocation), in(LabelZone, "eu-1")}},
				},
			}}},
		},
		{
			name:   "default region and zone give every combination",
			region: DefaultLocation,
			zone:   DefaultLocation,
			want: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{
					{MatchExpressions: []corev1.NodeSelectorRequirement{absent(LabelRegion), absent(LabelZone)}},
					{MatchExpressions: []corev1.NodeSelectorRequirement{absent(LabelRegion), in(LabelZone, DefaultLocation)}},
					{MatchExpressions: []corev1.NodeSelectorRequirement{in(LabelRegion, DefaultLocation), absent(LabelZone)}},
					{MatchExpressions: []corev1.NodeSelectorRequirement{in(LabelRegion, DefaultLocation), in(LabelZone, DefaultLocation)}},
				},
			}}},
		},
		{
			name:  "a spread zone may be default",
			facts: Facts{SpreadZone: DefaultLocation},
			want: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{
					{MatchExpressions: []corev1.NodeSelectorRequirement{absent(LabelZone)}},
					{MatchExpressions: []corev1.NodeSelectorRequirement{in(LabelZone, DefaultLocation)}},
				},
			}}},
		},
		{
			name:     "pod affinity hard",
			affinity: config.AffinitySettings{PodAffinity: config.AffinityHard},
			want:     &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{mdTerm}}},
		},
		{
			name:     "pod affinity soft",
			affinity: config.AffinitySettings{PodAffinity: config.AffinitySoft},
			want: &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: mdTerm}},
			}},
		},
		{
			name:     "pod anti-affinity hard",
			affinity: config.AffinitySettings{PodAntiAffinity: config.AffinityHard},
			want:     &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{mdTerm}}},
		},
		{
			name:     "pod anti-affinity soft",
			affinity: config.AffinitySettings{PodAntiAffinity: config.AffinitySoft},
			want: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: mdTerm}},
			}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := testSettings()
			s.Affinity = tc.affinity
			s.Region = tc.region
			s.Zone = tc.zone
			got := buildAffinity(s, tc.facts, "worker")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("buildAffinity() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTopologySpreadConstraints(t *testing.T) {
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"md": "worker"}}
	tests := []struct {
		name        string
		spreads     []config.TopologySpread
		podAffinity config.AffinityType
		antiAffine  bool
		want        []corev1.TopologySpreadConstraint
	}{
		{
			name: "default spreads over hosts",
			want: []corev1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: selector,
			}},
		},
		{
			name: "default spreads over hosts with pod anti-affinity",
			want: []corev1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: selector,
			}},
			antiAffine: true,
		},
		{name: "no default with soft pod affinity", podAffinity: config.AffinitySoft},
		{name: "no default with hard pod affinity", podAffinity: config.AffinityHard},
		{
			name:        "user constraints stay with pod affinity",
			spreads:     []config.TopologySpread{{MaxSkew: 1, TopologyKey: LabelZone, WhenUnsatisfiable: corev1.ScheduleAnyway}},
			podAffinity: config.AffinitySoft,
			want: []corev1.TopologySpreadConstraint{
				{MaxSkew: 1, TopologyKey: LabelZone, WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: selector},
			},
		},
		{
			name: "user constraints get the md selector",
			spreads: []config.TopologySpread{
				{MaxSkew: 2, TopologyKey: LabelZone, WhenUnsatisfiable: corev1.DoNotSchedule},
				{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway},
			},
			want: []corev1.TopologySpreadConstraint{
				{MaxSkew: 2, TopologyKey: LabelZone, WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: selector},
				{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: selector},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := testSettings()
			s.TopologySpreadConstraints = tc.spreads
			s.Affinity.PodAffinity = tc.podAffinity
			if tc.antiAffine {
				s.Affinity.PodAntiAffinity = config.AffinitySoft
			}
			if diff := cmp.Diff(tc.want, topologySpreadConstraints(s, "worker")); diff != "" {
				t.Errorf("topologySpreadConstraints() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
