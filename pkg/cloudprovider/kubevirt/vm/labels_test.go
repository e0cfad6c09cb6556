package vm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestVMLabels(t *testing.T) {
	system := func(extra map[string]string) map[string]string {
		out := map[string]string{
			LabelVM:                "worker-1",
			LabelMachineDeployment: "worker",
			LabelClusterName:       "abc123",
			LabelRole:              "worker",
			LabelProjectID:         "proj1",
			LabelClusterID:         "abc123",
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}

	tests := []struct {
		name   string
		modify func(*Input)
		want   map[string]string
	}{
		{
			name:   "system labels only",
			modify: func(*Input) {},
			want:   system(nil),
		},
		{
			name: "standalone machine uses its own name as md",
			modify: func(in *Input) {
				in.Machine.MachineDeployment = ""
			},
			want: system(map[string]string{LabelMachineDeployment: "worker-1"}),
		},
		{
			name: "storage class topology facts",
			modify: func(in *Input) {
				in.Facts.Region = "eu"
				in.Facts.Zone = "eu-1"
			},
			want: system(map[string]string{LabelRegion: "eu", LabelZone: "eu-1"}),
		},
		{
			name: "settings override facts",
			modify: func(in *Input) {
				in.Facts.Region = "eu"
				in.Facts.Zone = "eu-1"
				in.Settings.Region = "us"
				in.Settings.Zone = "us-2"
			},
			want: system(map[string]string{LabelRegion: "us", LabelZone: "us-2"}),
		},
		{
			name: "spread zone overrides every zone",
			modify: func(in *Input) {
				in.Facts.Zone = "eu-1"
				in.Settings.Zone = "us-2"
				in.Facts.SpreadZone = "spread-3"
			},
			want: system(map[string]string{LabelZone: "spread-3"}),
		},
		{
			name: "machine labels are kept but override nothing",
			modify: func(in *Input) {
				in.Facts.Zone = "eu-1"
				in.Machine.Labels = map[string]string{
					"team":           "a",
					LabelVM:          "evil",
					LabelRole:        "master",
					LabelClusterName: "other",
					LabelZone:        "machine-zone",
				}
			},
			want: system(map[string]string{"team": "a", LabelZone: "eu-1"}),
		},
		{
			name: "machine topology label stays when no topology is known",
			modify: func(in *Input) {
				in.Machine.Labels = map[string]string{LabelZone: "machine-zone"}
			},
			want: system(map[string]string{LabelZone: "machine-zone"}),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := testInput()
			tc.modify(&in)
			if diff := cmp.Diff(tc.want, vmLabels(in)); diff != "" {
				t.Errorf("vmLabels() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTemplateLabelsAddFlavor(t *testing.T) {
	in := testInput()
	in.Settings.Flavor = "kubermatic-standard"

	got := templateLabels(in)
	if got[LabelFlavor] != "kubermatic-standard" {
		t.Errorf("template label %s = %q, want %q", LabelFlavor, got[LabelFlavor], "kubermatic-standard")
	}
	if _, ok := vmLabels(in)[LabelFlavor]; ok {
		t.Errorf("VM labels carry %s, want it on the template only", LabelFlavor)
	}
}

func TestTemplateAnnotations(t *testing.T) {
	base := map[string]string{
		AnnotationPodBridgeLiveMigration: "true",
		AnnotationOVNLiveMigration:       "true",
	}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}

	tests := []struct {
		name   string
		modify func(*Input)
		want   map[string]string
	}{
		{
			name:   "live migration annotations only",
			modify: func(*Input) {},
			want:   base,
		},
		{
			name: "kube-ovn subnet",
			modify: func(in *Input) {
				in.Settings.OVNSubnet = "tenant-a"
			},
			want: with(map[string]string{AnnotationOVNLogicalSwitch: "tenant-a"}),
		},
		{
			name: "flatcar gets ignition and root complex",
			modify: func(in *Input) {
				in.Settings.OperatingSystem = "flatcar"
				in.UserData = `{"ignition":{}}`
			},
			want: with(map[string]string{
				AnnotationIgnitionData:                 `{"ignition":{}}`,
				AnnotationPlacePCIDevicesOnRootComplex: "true",
			}),
		},
		{
			name: "machine annotations without cdi and internals",
			modify: func(in *Input) {
				in.Machine.Annotations = map[string]string{
					"example.com/owner": "team-a",
					"cdi.kubevirt.io/storage.bind.immediate.requested":          "true",
					"v1.kubelet-flags.machine-controller.kubermatic.io/MaxPods": "110",
					"machine-controller.kubermatic.io/initializers":             "",
					"v1.kubelet-featuregates.example/Foo":                       "true",
					AnnotationOVNLiveMigration:                                  "false",
				}
			},
			want: with(map[string]string{"example.com/owner": "team-a"}),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := testInput()
			tc.modify(&in)
			if diff := cmp.Diff(tc.want, templateAnnotations(in)); diff != "" {
				t.Errorf("templateAnnotations() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCDIAnnotations(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]string
		want map[string]string
	}{
		{name: "nil", in: nil, want: nil},
		{name: "none match", in: map[string]string{"a": "b"}, want: nil},
		{
			name: "prefix match",
			in: map[string]string{
				"cdi.kubevirt.io/storage.bind.immediate.requested": "true",
				"cdi.kubevirt.io.example/x":                        "y",
				"example.com/cdi.kubevirt.io":                      "no",
			},
			want: map[string]string{
				"cdi.kubevirt.io/storage.bind.immediate.requested": "true",
				"cdi.kubevirt.io.example/x":                        "y",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, cdiAnnotations(tc.in)); diff != "" {
				t.Errorf("cdiAnnotations() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSecretLabels(t *testing.T) {
	in := testInput()
	in.Machine.Labels = map[string]string{"team": "a"}
	want := map[string]string{
		LabelVM:                "worker-1",
		LabelMachineDeployment: "worker",
		LabelClusterName:       "abc123",
	}
	if diff := cmp.Diff(want, secretLabels(in)); diff != "" {
		t.Errorf("secretLabels() mismatch (-want +got):\n%s", diff)
	}
}
