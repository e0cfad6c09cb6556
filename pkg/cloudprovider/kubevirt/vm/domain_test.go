package vm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func TestBuildDomain(t *testing.T) {
	mem := resource.MustParse("4Gi")
	cpus := resource.MustParse("2")

	tests := []struct {
		name   string
		modify func(*config.Settings)
		want   kubevirtcorev1.DomainSpec
	}{
		{
			name:   "cpus and memory as requests and limits",
			modify: func(*config.Settings) {},
			want: kubevirtcorev1.DomainSpec{
				Resources: kubevirtcorev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: cpus, corev1.ResourceMemory: mem},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: cpus, corev1.ResourceMemory: mem},
				},
				Devices: kubevirtcorev1.Devices{NetworkInterfaceMultiQueue: ptr.To(true)},
			},
		},
		{
			name: "vcpu cores without cpu resources",
			modify: func(s *config.Settings) {
				s.CPUs = nil
				s.VCPUCores = 4
				s.NetworkMultiQueue = false
			},
			want: kubevirtcorev1.DomainSpec{
				Resources: kubevirtcorev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceMemory: mem},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: mem},
				},
				CPU:     &kubevirtcorev1.CPU{Cores: 4},
				Devices: kubevirtcorev1.Devices{NetworkInterfaceMultiQueue: ptr.To(false)},
			},
		},
		{
			name: "instancetype brings its own resources",
			modify: func(s *config.Settings) {
				s.Instancetype = &kubevirtcorev1.InstancetypeMatcher{Name: "u1.small"}
				s.CPUs, s.Memory = nil, nil
				s.VCPUCores = 2
				s.Tuning.OvercommitGuestOverhead = true
			},
			want: kubevirtcorev1.DomainSpec{
				Resources: kubevirtcorev1.ResourceRequirements{OvercommitGuestOverhead: true},
				Devices:   kubevirtcorev1.Devices{NetworkInterfaceMultiQueue: ptr.To(true)},
			},
		},
		{
			name: "full tuning",
			modify: func(s *config.Settings) {
				s.CPUs = nil
				s.VCPUCores = 2
				s.Tuning = config.TuningSettings{
					CPU: &config.CPUTuning{
						Sockets: 2, Threads: 1, Model: "host-model", Features: []string{"pcid", "ssse3"},
						DedicatedCPUPlacement: true, IsolateEmulatorThread: true,
					},
					HugepagesPageSize: "2Mi",
					GuestMemory:       ptr.To(resource.MustParse("3Gi")),
					RNG:               true,
					BlockMultiQueue:   ptr.To(true),
				}
			},
			want: kubevirtcorev1.DomainSpec{
				Resources: kubevirtcorev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceMemory: mem},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: mem},
				},
				CPU: &kubevirtcorev1.CPU{
					Cores: 2, Sockets: 2, Threads: 1, Model: "host-model",
					Features: []kubevirtcorev1.CPUFeature{
						{Name: "pcid", Policy: "require"},
						{Name: "ssse3", Policy: "require"},
					},
					DedicatedCPUPlacement: true, IsolateEmulatorThread: true,
				},
				Memory: &kubevirtcorev1.Memory{
					Hugepages: &kubevirtcorev1.Hugepages{PageSize: "2Mi"},
					Guest:     ptr.To(resource.MustParse("3Gi")),
				},
				Devices: kubevirtcorev1.Devices{
					Rng:                        &kubevirtcorev1.Rng{},
					BlockMultiQueue:            ptr.To(true),
					NetworkInterfaceMultiQueue: ptr.To(true),
				},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := testSettings()
			tc.modify(s)
			if diff := cmp.Diff(tc.want, buildDomain(s)); diff != "" {
				t.Errorf("buildDomain() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMatchers(t *testing.T) {
	policy := kubevirtcorev1.IgnoreInferFromVolumeFailure
	tests := []struct {
		name      string
		in        *kubevirtcorev1.InstancetypeMatcher
		foundKind string
		want      *kubevirtcorev1.InstancetypeMatcher
	}{
		{name: "none", in: nil, foundKind: "X", want: nil},
		{
			name:      "found kind fills a missing kind",
			in:        &kubevirtcorev1.InstancetypeMatcher{Name: "u1.small"},
			foundKind: "VirtualMachineClusterInstancetype",
			want:      &kubevirtcorev1.InstancetypeMatcher{Name: "u1.small", Kind: "VirtualMachineClusterInstancetype"},
		},
		{
			name: "user fields are kept",
			in: &kubevirtcorev1.InstancetypeMatcher{
				Name: "u1.small", Kind: "VirtualMachineInstancetype", RevisionName: "r1",
				InferFromVolume: "datavolumedisk", InferFromVolumeFailurePolicy: &policy,
			},
			foundKind: "VirtualMachineClusterInstancetype",
			want: &kubevirtcorev1.InstancetypeMatcher{
				Name: "u1.small", Kind: "VirtualMachineInstancetype", RevisionName: "r1",
				InferFromVolume: "datavolumedisk", InferFromVolumeFailurePolicy: &policy,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.in.DeepCopy()
			if diff := cmp.Diff(tc.want, instancetypeMatcher(tc.in, tc.foundKind)); diff != "" {
				t.Errorf("instancetypeMatcher() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.in); diff != "" {
				t.Errorf("instancetypeMatcher() changed its input (-before +after):\n%s", diff)
			}
			var pref *kubevirtcorev1.PreferenceMatcher
			if tc.in != nil {
				pref = &kubevirtcorev1.PreferenceMatcher{Name: tc.in.Name, Kind: tc.in.Kind}
			}
			got := preferenceMatcher(pref, tc.foundKind)
			if (got == nil) != (tc.want == nil) || (got != nil && (got.Name != tc.want.Name || got.Kind != tc.want.Kind)) {
				t.Errorf("preferenceMatcher() = %+v, want name/kind of %+v", got, tc.want)
			}
		})
	}
}
