package kubevirt

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kubevirtcorev1 "kubevirt.io/api/core/v1"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// capacityView is a NodeCapacity with its quantities as strings, for
// comparing.
type capacityView struct {
	CPU, Memory, Disk string
	GPUType           string
	GPUCount          int64
	Labels            map[string]string
}

func capacityViewOf(c cloudprovider.NodeCapacity) capacityView {
	str := func(q *resource.Quantity) string {
		if q == nil {
			return ""
		}
		return q.String()
	}
	return capacityView{CPU: str(c.CPU), Memory: str(c.Memory), Disk: str(c.EphemeralStorage), GPUType: c.GPUType, GPUCount: c.GPUCount, Labels: c.Labels}
}

func quantity(s string) *resource.Quantity {
	return ptr.To(resource.MustParse(s))
}

// baseSettings sizes a VM with 2 CPUs, 4Gi and a 20Gi primary disk.
func baseSettings() *config.Settings {
	s := &config.Settings{CPUs: quantity("2"), Memory: quantity("4Gi")}
	s.PrimaryDisk.Size = resource.MustParse("20Gi")
	return s
}

func TestTemplateCapacity(t *testing.T) {
	for _, tc := range []struct {
		name   string
		modify func(*config.Settings)
		want   capacityView
	}{
		{
			name: "cpus and memory",
			want: capacityView{CPU: "2", Memory: "4Gi", Disk: "20Gi"},
		},
		{
			name:   "fractional cpus round up to whole vCPUs",
			modify: func(s *config.Settings) { s.CPUs = quantity("1500m") },
			want:   capacityView{CPU: "2", Memory: "4Gi", Disk: "20Gi"},
		},
		{
			name:   "vcpus.cores",
			modify: func(s *config.Settings) { s.CPUs, s.VCPUCores = nil, 4 },
			want:   capacityView{CPU: "4", Memory: "4Gi", Disk: "20Gi"},
		},
		{
			name: "CPU tuning topology wins over cpus",
			modify: func(s *config.Settings) {
				s.Tuning.CPU = &config.CPUTuning{Cores: 2, Sockets: 2, Threads: 2}
			},
			want: capacityView{CPU: "8", Memory: "4Gi", Disk: "20Gi"},
		},
		{
			name: "tuning sockets multiply vcpus.cores",
			modify: func(s *config.Settings) {
				s.CPUs, s.VCPUCores = nil, 3
				s.Tuning.CPU = &config.CPUTuning{Sockets: 2}
			},
			want: capacityView{CPU: "6", Memory: "4Gi", Disk: "20Gi"},
		},
		{
			name:   "guest memory is what the Node sees",
			modify: func(s *config.Settings) { s.Tuning.GuestMemory = quantity("3Gi") },
			want:   capacityView{CPU: "2", Memory: "3Gi", Disk: "20Gi"},
		},
		{
			name: "an instancetype not read yet leaves CPU and memory unknown",
			modify: func(s *config.Settings) {
				s.Instancetype = &kubevirtcorev1.InstancetypeMatcher{Name: "u1.large"}
			},
			want: capacityView{Disk: "20Gi"},
		},
		{
			name: "GPUs and GPU host devices of one vendor",
			modify: func(s *config.Settings) {
				s.GPUs = []config.DeviceSettings{{Name: "g1", DeviceName: "nvidia.com/TU104GL_Tesla_T4"}, {Name: "g2", DeviceName: "nvidia.com/TU104GL_Tesla_T4"}}
				s.HostDevices = []config.DeviceSettings{{Name: "h1", DeviceName: "nvidia.com/GA100_A100"}, {Name: "nic", DeviceName: "intel.com/sriov_nic"}}
			},
			want: capacityView{CPU: "2", Memory: "4Gi", Disk: "20Gi", GPUType: "nvidia.com/gpu", GPUCount: 3},
		},
		{
			name: "explicit region and zone",
			modify: func(s *config.Settings) {
				s.Region, s.Zone = "eu", "eu-a"
			},
			want: capacityView{CPU: "2", Memory: "4Gi", Disk: "20Gi", Labels: map[string]string{
				"topology.kubernetes.io/region": "eu", "topology.kubernetes.io/zone": "eu-a",
			}},
		},
		{
			name: "VMs spread over zones have no common zone",
			modify: func(s *config.Settings) {
				s.Region, s.Zones = "eu", []string{"eu-a", "eu-b"}
			},
			want: capacityView{CPU: "2", Memory: "4Gi", Disk: "20Gi", Labels: map[string]string{"topology.kubernetes.io/region": "eu"}},
		},
		{
			name:   "a single spread zone is every VM's",
			modify: func(s *config.Settings) { s.Zones = []string{"eu-b"} },
			want:   capacityView{CPU: "2", Memory: "4Gi", Disk: "20Gi", Labels: map[string]string{"topology.kubernetes.io/zone": "eu-b"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := baseSettings()
			if tc.modify != nil {
				tc.modify(s)
			}
			if diff := cmp.Diff(tc.want, capacityViewOf(nodeCapacity(s, templateShape(s)))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPresetCapacity(t *testing.T) {
	preset := &kubevirtcorev1.DomainSpec{
		Resources: kubevirtcorev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("6Gi"),
		}},
		Devices: kubevirtcorev1.Devices{GPUs: []kubevirtcorev1.GPU{{Name: "g", DeviceName: "amd.com/MI210"}}},
	}
	for _, tc := range []struct {
		name     string
		template func(*config.Settings)
		preset   func(*kubevirtcorev1.DomainSpec)
		want     capacityView
	}{
		{
			name:     "the preset sizes a template without cpus and memory",
			template: func(s *config.Settings) { s.CPUs, s.Memory = nil, nil },
			want:     capacityView{CPU: "3", Memory: "6Gi", Disk: "20Gi", GPUType: "amd.com/gpu", GPUCount: 1},
		},
		{
			name: "the template's cpus and memory win",
			want: capacityView{CPU: "2", Memory: "4Gi", Disk: "20Gi", GPUType: "amd.com/gpu", GPUCount: 1},
		},
		{
			name:     "the preset's topology, limit and guest memory",
			template: func(s *config.Settings) { s.CPUs, s.Memory = nil, nil },
			preset: func(d *kubevirtcorev1.DomainSpec) {
				d.CPU = &kubevirtcorev1.CPU{Cores: 2, Sockets: 3}
				d.Memory = &kubevirtcorev1.Memory{Guest: quantity("5Gi")}
			},
			want: capacityView{CPU: "6", Memory: "5Gi", Disk: "20Gi", GPUType: "amd.com/gpu", GPUCount: 1},
		},
		{
			name:     "a CPU limit counts before the request",
			template: func(s *config.Settings) { s.CPUs, s.Memory = nil, nil },
			preset: func(d *kubevirtcorev1.DomainSpec) {
				d.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5")}
			},
			want: capacityView{CPU: "5", Memory: "6Gi", Disk: "20Gi", GPUType: "amd.com/gpu", GPUCount: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := baseSettings()
			if tc.template != nil {
				tc.template(s)
			}
			d := preset.DeepCopy()
			if tc.preset != nil {
				tc.preset(d)
			}
			got := nodeCapacity(s, withPreset(templateShape(s), presetShape(d)))
			if diff := cmp.Diff(tc.want, capacityViewOf(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestInstancetypeCapacity(t *testing.T) {
	s := baseSettings()
	s.Instancetype = &kubevirtcorev1.InstancetypeMatcher{Name: "u1.xlarge"}
	s.GPUs = []config.DeviceSettings{{Name: "g", DeviceName: "nvidia.com/T4"}}
	it := &instancetypev1beta1.VirtualMachineInstancetypeSpec{
		CPU:         instancetypev1beta1.CPUInstancetype{Guest: 4},
		Memory:      instancetypev1beta1.MemoryInstancetype{Guest: resource.MustParse("16Gi")},
		GPUs:        []kubevirtcorev1.GPU{{Name: "i", DeviceName: "nvidia.com/T4"}},
		HostDevices: []kubevirtcorev1.HostDevice{{Name: "a", DeviceName: "amd.com/MI210"}},
	}
	got := nodeCapacity(s, withInstancetype(templateShape(s), instancetypeShape(it)))
	want := capacityView{CPU: "4", Memory: "16Gi", Disk: "20Gi", GPUType: "nvidia.com/gpu", GPUCount: 2}
	if diff := cmp.Diff(want, capacityViewOf(got)); diff != "" {
		t.Errorf("template cpus and memory must give way to the instancetype (-want +got):\n%s", diff)
	}
}

func TestGPUCapacity(t *testing.T) {
	for _, tc := range []struct {
		name              string
		gpus, hostDevices []string
		wantType          string
		wantCount         int64
	}{
		{name: "none"},
		{name: "host devices of other vendors are not GPUs", hostDevices: []string{"intel.com/qat", "mellanox.com/cx6"}},
		{name: "a GPU of any vendor counts", gpus: []string{"example.org/npu"}, wantType: "example.org/gpu", wantCount: 1},
		{name: "a name without vendor is skipped", gpus: []string{"T4"}},
		{
			name: "the vendor with the most devices", gpus: []string{"amd.com/a", "nvidia.com/b"}, hostDevices: []string{"nvidia.com/c"},
			wantType: "nvidia.com/gpu", wantCount: 2,
		},
		{name: "a tie goes to the first by name", gpus: []string{"nvidia.com/b", "amd.com/a"}, wantType: "amd.com/gpu", wantCount: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typ, count := gpuCapacity(tc.gpus, tc.hostDevices)
			if typ != tc.wantType || count != tc.wantCount {
				t.Errorf("got %q × %d, want %q × %d", typ, count, tc.wantType, tc.wantCount)
			}
		})
	}
}
