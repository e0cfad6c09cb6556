package config

import (
	"testing"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	corev1 "k8s.io/api/core/v1"
)

func featureCases(testing.TB) []validCase {
	return []validCase{
		{name: "every feature", patch: everyFeaturePatch, want: everyFeatureSettings},
		{
			// Gardener's documented KubeVirt WorkerConfig example, under
			// virtualMachine.tuning.
			name: "Gardener WorkerConfig tuning",
			patch: `{cloudProviderSpec: {virtualMachine: {
  template: {secondaryDisks: [{name: volume-1, size: 10Gi, storageClassName: default}]},
  dnsPolicy: ClusterFirst,
  dnsConfig: {nameservers: [8.8.8.8]},
  tuning: {
    devices: {
      disks: [{name: root-disk, disk: {bus: virtio}, cache: writethrough, dedicatedIOThread: true}, {name: volume-1, disk: {}}],
      rng: {}, blockMultiQueue: true, networkInterfaceMultiQueue: true},
    cpu: {cores: 1, sockets: 2, threads: 1, model: host-model, features: [pcid], dedicatedCpuPlacement: false, isolateEmulatorThread: false},
    memory: {hugepages: {pageSize: 2Mi}, guest: 1Gi},
    overcommitGuestOverhead: true}}}}`,
			want: func(s *Settings) {
				s.PrimaryDisk.Tuning = DiskTuningSettings{Bus: kubevirtcorev1.DiskBusVirtio, Cache: kubevirtcorev1.CacheWriteThrough, DedicatedIOThread: new(true)}
				s.SecondaryDisks = []SecondaryDiskSettings{{Name: "volume-1", DiskSettings: DiskSettings{Size: *qty("10Gi"), StorageClassName: "default"}}}
				s.DNSPolicy = corev1.DNSClusterFirst
				s.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"8.8.8.8"}}
				s.Tuning = TuningSettings{
					CPU:                     &CPUTuning{Cores: 1, Sockets: 2, Threads: 1, Model: "host-model", Features: []string{"pcid"}},
					HugepagesPageSize:       "2Mi",
					GuestMemory:             qty("1Gi"),
					OvercommitGuestOverhead: true,
					RNG:                     true,
					BlockMultiQueue:         new(true),
				}
			},
		},
		{
			name:  "vcpus with matching tuning cores",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {cpus: null, vcpus: {cores: 4}}, tuning: {cpu: {cores: 4, dedicatedCpuPlacement: true}}}}}`,
			want: func(s *Settings) {
				s.CPUs, s.VCPUCores = nil, 4
				s.Tuning.CPU = &CPUTuning{Cores: 4, DedicatedCPUPlacement: true}
			},
		},
		{
			name:  "PVC clone detected from namespace/name",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {osImage: images/ubuntu-22-04}}}}}`,
			want: func(s *Settings) {
				s.PrimaryDisk.Source = ImageSource{Kind: ImageSourcePVC, PVCNamespace: "images", PVCName: "ubuntu-22-04"}
				s.PrimaryDisk.PreAllocated = false
			},
		},
		{
			name:  "PVC clone by name with an explicit source",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {source: pvc, osImage: ubuntu.golden}}}}}`,
			want: func(s *Settings) {
				s.PrimaryDisk.Source = ImageSource{Kind: ImageSourcePVC, PVCName: "ubuntu.golden"}
				s.PrimaryDisk.PreAllocated = false
			},
		},
		{
			name:  "registry detected, pulled by the node",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {osImage: "oci-archive:///images/ubuntu.tar"}}}}}`,
			want: func(s *Settings) {
				s.PrimaryDisk.Source = ImageSource{Kind: ImageSourceRegistry, URL: "oci-archive:///images/ubuntu.tar", PullMethod: "node"}
				s.PrimaryDisk.PreAllocated = false
			},
		},
		{
			name: "http source with headers and credentials",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {source: http,
				extraHeaders: ["X-Token: abc", "Accept: */*"], dataVolumeSecretRef: image-credentials}}}}}`,
			want: func(s *Settings) {
				s.PrimaryDisk.Source.ExtraHeaders = []string{"X-Token: abc", "Accept: */*"}
				s.PrimaryDisk.Source.SecretRef = "image-credentials"
			},
		},
		{
			name: "ignored options give warnings",
			patch: `{cloudProviderSpec: {virtualMachine: {flavor: {profile: x}, template: {primaryDisk: {
				osImage: "docker://quay.io/os/ubuntu:22.04", extraHeadersSecretRef: headers}}}}}`,
			want: func(s *Settings) {
				s.PrimaryDisk.Source = ImageSource{Kind: ImageSourceRegistry, URL: "docker://quay.io/os/ubuntu:22.04", PullMethod: "node"}
				s.PrimaryDisk.PreAllocated = false
				s.Warnings = []string{
					pVM + ".flavor.profile is ignored",
					pPD + ".extraHeadersSecretRef is ignored: it only applies to http sources",
				}
			},
		},
		{
			name:  "pre-allocation switched off",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {disablePreAllocatedDataVolumes: true}}}}}`,
			want: func(s *Settings) {
				s.PrimaryDisk.PreAllocated = false
			},
		},
		{
			name:  "pre-allocation explicitly on",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {disablePreAllocatedDataVolumes: false}}}}}`,
			want:  func(*Settings) {},
		},
		{
			name:  "switching pre-allocation off for a registry image is ignored",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {osImage: "docker://quay.io/os/ubuntu:22.04", disablePreAllocatedDataVolumes: true}}}}}`,
			want: func(s *Settings) {
				s.PrimaryDisk.Source = ImageSource{Kind: ImageSourceRegistry, URL: "docker://quay.io/os/ubuntu:22.04", PullMethod: "node"}
				s.PrimaryDisk.PreAllocated = false
				s.Warnings = []string{pPD + ".disablePreAllocatedDataVolumes is ignored: only http images are pre-allocated"}
			},
		},
		{
			name:  "pull method with an http source is ignored",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {pullMethod: pod}}}}}`,
			want: func(s *Settings) {
				s.Warnings = []string{pPD + ".pullMethod is ignored: it only applies to registry sources"}
			},
		},
		{
			name:  "preset types ignore case",
			patch: `{cloudProviderSpec: {affinity: {podAffinityPreset: Soft, nodeAffinityPreset: {type: HARD, key: example.com/gpu}}}}`,
			want: func(s *Settings) {
				s.Affinity = AffinitySettings{PodAffinity: AffinitySoft, NodeAffinity: NodePreset{Type: AffinityHard, Key: "example.com/gpu"}}
			},
		},
		{
			name:  "ConfigVar quirks of the SDK",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {cpus: 2, memory: null, Memory: {value: 4Gi, note: x}}}}}`,
			want: func(s *Settings) {
				s.Warnings = []string{pT + `.memory: unknown field "note" is ignored`}
			},
		},
		{
			name:  "flavor sizes the VM: cpus and memory optional (Kubermatic flavor example)",
			patch: `{cloudProviderSpec: {virtualMachine: {flavor: {name: kubermatic-standard}, template: {cpus: null, memory: null}}}}`,
			want: func(s *Settings) {
				s.Flavor = "kubermatic-standard"
				s.CPUs, s.Memory = nil, nil
			},
		},
		{
			name:  "instancetype kind left to the lookup",
			patch: `{cloudProviderSpec: {virtualMachine: {instancetype: {name: u1.medium, revisionName: r1, inferFromVolumeFailurePolicy: Ignore}, template: {cpus: null, memory: null}}}}`,
			want: func(s *Settings) {
				policy := kubevirtcorev1.IgnoreInferFromVolumeFailure
				s.Instancetype = &kubevirtcorev1.InstancetypeMatcher{Name: "u1.medium", RevisionName: "r1", InferFromVolumeFailurePolicy: &policy}
				s.CPUs, s.Memory = nil, nil
				s.Warnings = []string{pVM + ".instancetype.inferFromVolumeFailurePolicy is ignored without inferFromVolume"}
			},
		},
		{
			name:  "instancetype and preference inferred from the primary disk",
			patch: `{cloudProviderSpec: {virtualMachine: {instancetype: {inferFromVolume: datavolumedisk, inferFromVolumeFailurePolicy: Reject}, preference: {inferFromVolume: datavolumedisk}, template: {cpus: null, memory: null}}}}`,
			want: func(s *Settings) {
				policy := kubevirtcorev1.RejectInferFromVolumeFailure
				s.Instancetype = &kubevirtcorev1.InstancetypeMatcher{InferFromVolume: "datavolumedisk", InferFromVolumeFailurePolicy: &policy}
				s.Preference = &kubevirtcorev1.PreferenceMatcher{InferFromVolume: "datavolumedisk"}
				s.CPUs, s.Memory = nil, nil
			},
		},
	}
}

const everyFeaturePatch = `
operatingSystem: flatcar
cloudProviderSpec:
  clusterName: {value: abc123}
  projectID: proj-1
  auth:
    namespace: cluster-abc123
  virtualMachine:
    flavor: {name: kubermatic-standard}
    template:
      cpus: "4"
      memory: 8Gi
      primaryDisk:
        osImage: docker://quay.io/kubermatic-virt-disks/flatcar:3815
        source: registry
        pullMethod: pod
        size: 25Gi
        storageClassName: ceph-block
        storageAccessType: ReadWriteMany
        storageTarget: pvc
      secondaryDisks:
      - {size: 50Gi, storageClassName: local-ssd, storageAccessType: ReadWriteOnce}
      - {name: logs, size: 10Gi, storageClassName: ceph-block}
    dnsPolicy: None
    dnsConfig: {nameservers: [10.0.0.10, "fd00::10"], searches: [cluster.local]}
    location: {region: eu-west, zones: [eu-west-1a, eu-west-1b]}
    providerNetwork: {name: kube-ovn, vpc: {name: tenant-vpc, subnet: {name: tenant-subnet}}}
    enableNetworkMultiQueue: false
    evictionStrategy: LiveMigrate
    networks: [{name: tenant-net, default: true}, {name: shared/storage-net}]
    tuning:
      cpu: {cores: 2, sockets: 2, threads: 1, model: host-passthrough, dedicatedCpuPlacement: true, isolateEmulatorThread: true}
      memory: {hugepages: {pageSize: 1Gi}, guest: 7Gi}
      devices:
        disks:
        - {name: root-disk, disk: {bus: virtio}, cache: none, dedicatedIOThread: true}
        - {name: logs, disk: {bus: scsi}, cache: writeback}
        blockMultiQueue: false
  affinity:
    podAntiAffinityPreset: hard
    nodeAffinityPreset: {type: hard, key: node-role.kubernetes.io/virt, values: []}
    nodeAntiAffinityPreset: {type: soft, key: example.com/maintenance, values: ["true"]}
  topologySpreadConstraints:
  - {maxSkew: "2", topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}
  - {topologyKey: kubernetes.io/hostname}
`

func everyFeatureSettings(s *Settings) {
	s.OperatingSystem = "flatcar"
	s.ClusterName, s.ProjectID, s.Namespace = "abc123", "proj-1", "cluster-abc123"
	s.Flavor = "kubermatic-standard"
	s.CPUs, s.Memory = qty("4"), qty("8Gi")
	s.PrimaryDisk = PrimaryDiskSettings{
		DiskSettings: DiskSettings{
			Size: *qty("25Gi"), StorageClassName: "ceph-block", AccessMode: corev1.ReadWriteMany,
			Tuning: DiskTuningSettings{Bus: kubevirtcorev1.DiskBusVirtio, Cache: kubevirtcorev1.CacheNone, DedicatedIOThread: new(true)},
		},
		StorageTarget: StorageTargetPVC,
		Source:        ImageSource{Kind: ImageSourceRegistry, URL: "docker://quay.io/kubermatic-virt-disks/flatcar:3815", PullMethod: "pod"},
	}
	s.SecondaryDisks = []SecondaryDiskSettings{
		{Name: "secondarydisk0", DiskSettings: DiskSettings{Size: *qty("50Gi"), StorageClassName: "local-ssd", AccessMode: corev1.ReadWriteOnce}},
		{Name: "logs", DiskSettings: DiskSettings{Size: *qty("10Gi"), StorageClassName: "ceph-block",
			Tuning: DiskTuningSettings{Bus: kubevirtcorev1.DiskBusSCSI, Cache: kubevirtcorev1.CacheWriteBack}}},
	}
	s.DNSPolicy = corev1.DNSNone
	s.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"10.0.0.10", "fd00::10"}, Searches: []string{"cluster.local"}}
	s.Region, s.Zones = "eu-west", []string{"eu-west-1a", "eu-west-1b"}
	s.OVNSubnet = "tenant-subnet"
	s.NetworkMultiQueue = false
	s.EvictionStrategy = kubevirtcorev1.EvictionStrategyLiveMigrate
	s.Networks = []NetworkRef{{Name: "tenant-net", Default: true, Binding: BindingBridge}, {Namespace: "shared", Name: "storage-net", Binding: BindingBridge}}
	s.Tuning = TuningSettings{
		CPU:               &CPUTuning{Cores: 2, Sockets: 2, Threads: 1, Model: "host-passthrough", DedicatedCPUPlacement: true, IsolateEmulatorThread: true},
		HugepagesPageSize: "1Gi",
		GuestMemory:       qty("7Gi"),
		BlockMultiQueue:   new(false),
	}
	s.Affinity = AffinitySettings{
		PodAntiAffinity:  AffinityHard,
		NodeAffinity:     NodePreset{Type: AffinityHard, Key: "node-role.kubernetes.io/virt"},
		NodeAntiAffinity: NodePreset{Type: AffinitySoft, Key: "example.com/maintenance", Values: []string{"true"}},
	}
	s.TopologySpreadConstraints = []TopologySpread{
		{MaxSkew: 2, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule},
		{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway},
	}
}
