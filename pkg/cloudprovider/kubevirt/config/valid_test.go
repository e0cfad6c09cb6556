package config

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	corev1 "k8s.io/api/core/v1"
)

type validCase struct {
	name string
	// patch is merged into baseSpec unless input is set.
	patch    string
	input    []byte
	env      map[string]string
	resolver Resolver
	// want changes the Settings of the base spec; wantFull replaces them.
	want     func(*Settings)
	wantFull func(testing.TB) *Settings
}

// baseSettings are the Settings of baseSpec.
func baseSettings(t testing.TB) *Settings {
	t.Helper()
	return &Settings{
		ClusterName:     "cluster-abc",
		Kubeconfig:      testKubeconfig(t),
		OperatingSystem: "ubuntu",
		CPUs:            qty("2"),
		Memory:          qty("4Gi"),
		PrimaryDisk: PrimaryDiskSettings{
			DiskSettings:  DiskSettings{Size: *qty("20Gi"), StorageClassName: "fast"},
			StorageTarget: StorageTargetStorage,
			Source:        ImageSource{Kind: ImageSourceHTTP, URL: "http://images.example.com/ubuntu-22.04.img"},
			PreAllocated:  true,
		},
		NetworkMultiQueue: true,
		EvictionStrategy:  kubevirtcorev1.EvictionStrategyExternal,
	}
}

// validCases are the valid specs of every group.
func validCases(t testing.TB) []validCase {
	t.Helper()
	var cases []validCase
	for _, group := range []func(testing.TB) []validCase{seedCases, featureCases, resolutionCases, sshServiceValidCases} {
		cases = append(cases, group(t)...)
	}
	return cases
}

func TestLoadValid(t *testing.T) {
	for _, tc := range validCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			input := tc.input
			if input == nil {
				input = patched(t, tc.patch)
			}
			got, warnings, err := Load(t.Context(), input, tc.resolver, env(tc.env))
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			want := baseSettings(t)
			if tc.wantFull != nil {
				want = tc.wantFull(t)
			}
			if tc.want != nil {
				tc.want(want)
			}
			if diff := cmp.Diff(want, got, quantityComparer); diff != "" {
				t.Errorf("unexpected settings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want.Warnings, warnings); diff != "" {
				t.Errorf("Load returned other warnings than the settings (-settings +returned):\n%s", diff)
			}
		})
	}
}

func seedCases(t testing.TB) []validCase {
	t.Helper()
	kubeconfig := b64(testKubeconfig(t))
	return []validCase{
		{name: "minimal spec"},
		{
			// Kubermatic's documented "KKP MachineDeployment Sample".
			name: "Kubermatic MachineDeployment sample",
			input: yamlJSON(t, fmt.Sprintf(`
sshPublicKeys:
  - "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKoTAIJh5aJkXJ8SQ1s6qRm0EV5e6l6T+r0x6f0Ap2Vx user@example"
cloudProvider: "kubevirt"
cloudProviderSpec:
  auth:
    kubeconfig:
      value: '%s'
  virtualMachine:
    template:
      cpus: "1"
      memory: "2048M"
      primaryDisk:
        osImage: "http://image-repo.kube-system.svc/images/ubuntu-22.04.img"
        size: "10Gi"
        storageClassName: "kubermatic-fast"
  affinity:
    podAffinityPreset: "" # Allowed values: "", "soft", "hard"
    podAntiAffinityPreset: "" # Allowed values: "", "soft", "hard"
    nodeAffinityPreset:
      type: "" # Allowed values: "", "soft", "hard"
      key: "foo"
      values:
        - bar
operatingSystem: "ubuntu"
operatingSystemSpec:
  distUpgradeOnBoot: false
  disableAutoUpdate: true
`, kubeconfig)),
			want: func(s *Settings) {
				s.ClusterName = ""
				s.CPUs, s.Memory = qty("1"), qty("2048M")
				s.PrimaryDisk.Size = *qty("10Gi")
				s.PrimaryDisk.StorageClassName = "kubermatic-fast"
				s.PrimaryDisk.Source.URL = "http://image-repo.kube-system.svc/images/ubuntu-22.04.img"
			},
		},
		{
			// A providerSpec in the flat format of KKP 2.20 and older, with
			// the kubeconfig (plain YAML) from the controller's environment.
			name: "flat format of KKP 2.20 and older",
			input: yamlJSON(t, `
caPublicKey: ""
cloudProvider: kubevirt
cloudProviderSpec:
  cpus: "1"
  dnsConfig:
    nameservers:
    - 8.8.8.8
  dnsPolicy: None
  kubeconfig: ""
  memory: 2Gi
  namespace: default
  pvcSize: 10Gi
  sourceURL: http://10.107.208.71/ubuntu.img
  storageClassName: local-path
  podAffinityPreset: ""
  podAntiAffinityPreset: "soft"
  nodeAffinityPreset:
    type: "soft"
    key: "foo"
    values: [bar1, bar2]
  nodeAntiAffinityPreset:
    type: "soft"
    key: "foo"
    values: [bar1, bar2]
operatingSystem: ubuntu
operatingSystemSpec:
  distUpgradeOnBoot: false
sshPublicKeys:
- ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAACAQDA helene@example
`),
			env: map[string]string{"KUBEVIRT_KUBECONFIG": string(testKubeconfig(t))},
			want: func(s *Settings) {
				s.ClusterName = ""
				s.Namespace = "default"
				s.CPUs, s.Memory = qty("1"), qty("2Gi")
				s.PrimaryDisk.Size = *qty("10Gi")
				s.PrimaryDisk.StorageClassName = "local-path"
				s.PrimaryDisk.Source.URL = "http://10.107.208.71/ubuntu.img"
				s.DNSPolicy = corev1.DNSNone
				s.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"8.8.8.8"}}
				preset := NodePreset{Type: AffinitySoft, Key: "foo", Values: []string{"bar1", "bar2"}}
				s.Affinity = AffinitySettings{PodAntiAffinity: AffinitySoft, NodeAffinity: preset, NodeAntiAffinity: preset}
				s.Warnings = []string{"cloudProviderSpec uses the flat format of KKP <= 2.20 (fields: kubeconfig, cpus, memory, " +
					"namespace, sourceURL, pvcSize, storageClassName, dnsPolicy, dnsConfig, podAffinityPreset, podAntiAffinityPreset, " +
					"nodeAffinityPreset, nodeAntiAffinityPreset); it was converted to the nested format, see docs/provider-spec.md"}
			},
		},
		{
			// The shape of upstream's examples/kubevirt-machinedeployment.yaml
			// (reference §1.4).
			name: "reference example with instancetype and preference",
			input: yamlJSON(t, fmt.Sprintf(`
cloudProvider: kubevirt
cloudProviderSpec:
  clusterName: cluster-name
  auth:
    kubeconfig:
      value: '%s'
  virtualMachine:
    instancetype:
      name: standard-2
      kind: VirtualMachineInstancetype
    preference:
      name: sockets-advantage
      kind: VirtualMachinePreference
    template:
      cpus: "1"
      memory: "2048M"
      primaryDisk:
        osImage: http://10.109.79.210/ubuntu-22.04.img
        size: 10Gi
        storageClassName: kubermatic-fast
  affinity:
    nodeAffinityPreset:
      type: ""
      key: foo
      values:
        - bar
  topologySpreadConstraints:
    - maxSkew: "1"
      topologyKey: kubernetes.io/hostname
      whenUnsatisfiable: ""
operatingSystem: ubuntu
operatingSystemSpec:
  disableAutoUpdate: true
`, kubeconfig)),
			want: func(s *Settings) {
				s.ClusterName = "cluster-name"
				s.Instancetype = &kubevirtcorev1.InstancetypeMatcher{Name: "standard-2", Kind: "VirtualMachineInstancetype"}
				s.Preference = &kubevirtcorev1.PreferenceMatcher{Name: "sockets-advantage", Kind: "VirtualMachinePreference"}
				s.CPUs, s.Memory = nil, nil
				s.PrimaryDisk.Size = *qty("10Gi")
				s.PrimaryDisk.StorageClassName = "kubermatic-fast"
				s.PrimaryDisk.Source.URL = "http://10.109.79.210/ubuntu-22.04.img"
				s.TopologySpreadConstraints = []TopologySpread{{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway}}
				s.Warnings = []string{pT + ": cpus, memory ignored because virtualMachine.instancetype sets the CPUs and memory"}
			},
		},
	}
}
