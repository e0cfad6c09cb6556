package config

import (
	"strings"
	"testing"
)

func diskCases(testing.TB) []invalidCase {
	return []invalidCase{
		{name: "disk size missing", patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {size: null}}}}}`,
			want: msg(pPD + `.size: Required value: a Kubernetes quantity such as 10Gi`)},
		{name: "negative disk size", patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {size: -1Gi}}}}}`,
			want: msg(pPD + `.size: Invalid value: "-1Gi": must be greater than zero`)},
		{name: "storage class not a name", patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {storageClassName: "Fast SSD"}}}}}`,
			want: msg(pPD + `.storageClassName: Invalid value: "Fast SSD": a lowercase RFC 1123 subdomain must consist of lower case ` +
				`alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', ` +
				`regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`)},
		{
			name:  "unknown access mode",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {storageAccessType: RWX}}}}}`,
			want: msg(pPD + `.storageAccessType: Unsupported value: "RWX": supported values: "ReadWriteOnce", "ReadOnlyMany", ` +
				`"ReadWriteMany", "ReadWriteOncePod"`),
		},
		{
			name:  "unknown storage target",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {storageTarget: PVC}}}}}`,
			want:  msg(pPD + `.storageTarget: Unsupported value: "PVC": supported values: "storage", "pvc"`),
		},
		{
			name:  "OS image missing",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {osImage: null}}}}}`,
			want:  msg(pPD + `.osImage: Required value: an http(s) URL, a docker:// or oci-archive:// URL, or a PVC as namespace/name or name`),
		},
		{
			name:  "unknown image source",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {source: s3}}}}}`,
			want:  msg(pPD + `.source: Unsupported value: "s3": supported values: "http", "registry", "pvc"`),
		},
		{
			name:  "http source without a URL",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {source: http, osImage: images/ubuntu.img}}}}}`,
			want:  msg(pPD + `.osImage: Invalid value: "images/ubuntu.img": must be an http:// or https:// URL when source is http`),
		},
		{
			name:  "registry source with an http URL",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {source: registry}}}}}`,
			want: msg(pPD + `.osImage: Invalid value: "http://images.example.com/ubuntu-22.04.img": must be a docker:// or ` +
				`oci-archive:// URL when source is registry`),
		},
		{
			name:  "auto-detected image that is no URL and no PVC",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {osImage: "ftp://images/ubuntu.img"}}}}}`,
			want: msg(pPD + `.osImage: Invalid value: "ftp://images/ubuntu.img": must be an http(s) URL, a docker:// or ` +
				`oci-archive:// URL, or a PVC as namespace/name or name`),
		},
		{
			name:  "pvc source with a bad namespace",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {source: pvc, osImage: Images/ubuntu}}}}}`,
			want: msg(pPD + `.osImage: Invalid value: "Images/ubuntu": must name a PVC as namespace/name or name; the namespace: ` +
				`a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with ` +
				`an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`),
		},
		{
			name:  "unknown pull method",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {osImage: "docker://quay.io/os/ubuntu:22.04", pullMethod: kubelet}}}}}`,
			want:  msg(pPD + `.pullMethod: Unsupported value: "kubelet": supported values: "node", "pod"`),
		},
		{
			name:  "extra headers inline and from a secret",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {extraHeaders: ["X-Auth: a"], extraHeadersSecretRef: headers}}}}}`,
			want:  msg(pPD + `.extraHeadersSecretRef: Forbidden: may not be set together with extraHeaders`),
		},
		{
			name:  "malformed extra header does not show its value",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {extraHeaders: ["Authorization Bearer abc"]}}}}}`,
			want:  msg(pPD + `.extraHeaders[0]: Invalid value: must look like "Name: value"`),
		},
		{
			name:  "secondary disk without size (the storage class may be left to the default)",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {secondaryDisks: [{storageAccessType: ReadWriteMany}]}}}}`,
			want:  msg(pT + `.secondaryDisks[0].size: Required value: a Kubernetes quantity such as 10Gi`),
		},
		{
			name:  "secondary disk with a reserved name",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {secondaryDisks: [{name: root-disk, size: 5Gi, storageClassName: fast}]}}}}`,
			want: msg(pT + `.secondaryDisks[0].name: Invalid value: "root-disk": is reserved; the provider uses "root-disk", ` +
				`"datavolumedisk", "cloudinitdisk"`),
		},
		{
			name: "secondary disk names clash with a default name",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {secondaryDisks: [
				{name: secondarydisk1, size: 5Gi, storageClassName: fast}, {size: 5Gi, storageClassName: fast}]}}}}`,
			want: msg(pT + `.secondaryDisks[1].name: Duplicate value: "secondarydisk1"`),
		},
		{
			name:  "secondary disk with its own bad access mode",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {secondaryDisks: [{size: 5Gi, storageClassName: fast, storageAccessType: rwo}]}}}}`,
			want: msg(pT + `.secondaryDisks[0].storageAccessType: Unsupported value: "rwo": supported values: "ReadWriteOnce", ` +
				`"ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"`),
		},
		{
			// 2 + 195 disks would need 202 MSI vectors; the count limit
			// refuses them first (TestLimitsWithinMSIVectors).
			name:  "more disks than the limit",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {secondaryDisks: [` + secondaryDisks(195) + `]}}}}`,
			want:  msg(pVM + `.template.secondaryDisks: Too many: 195: must have at most 64 items`),
		},
	}
}

// secondaryDisks returns n secondary disks in YAML flow style.
func secondaryDisks(n int) string {
	disks := make([]string, n)
	for i := range disks {
		disks[i] = "{size: 1Gi, storageClassName: fast}"
	}
	return strings.Join(disks, ", ")
}

func networkCases(testing.TB) []invalidCase {
	return []invalidCase{
		{
			name:  "DNS policy is case-sensitive",
			patch: `{cloudProviderSpec: {virtualMachine: {dnsPolicy: clusterfirst}}}`,
			want: msg(pVM + `.dnsPolicy: Unsupported value: "clusterfirst": supported values: "ClusterFirstWithHostNet", ` +
				`"ClusterFirst", "Default", "None"`),
		},
		{
			name:  "DNS policy None without nameservers",
			patch: `{cloudProviderSpec: {virtualMachine: {dnsPolicy: None, dnsConfig: {searches: [example.com]}}}}`,
			want:  msg(pVM + `.dnsConfig.nameservers: Required value: dnsPolicy None needs at least one nameserver`),
		},
		{
			name:  "nameserver is not an IP",
			patch: `{cloudProviderSpec: {virtualMachine: {dnsConfig: {nameservers: [8.8.8.8, dns.google]}}}}`,
			want:  msg(pVM + `.dnsConfig.nameservers[1]: Invalid value: "dns.google": must be an IPv4 or IPv6 address`),
		},
		{
			name:  "too many nameservers",
			patch: `{cloudProviderSpec: {virtualMachine: {dnsConfig: {nameservers: [1.1.1.1, 8.8.8.8, 9.9.9.9, "2001:4860:4860::8888"]}}}}`,
			want:  msg(pVM + `.dnsConfig.nameservers: Too many: 4: must have at most 3 items`),
		},
		{
			name:  "multi-queue settings disagree",
			patch: `{cloudProviderSpec: {virtualMachine: {enableNetworkMultiQueue: false, tuning: {devices: {networkInterfaceMultiQueue: true}}}}}`,
			want:  msg(pVM + `.tuning.devices.networkInterfaceMultiQueue: Invalid value: true: must agree with virtualMachine.enableNetworkMultiQueue (false)`),
		},
		{
			name: "networks: bad name, duplicate, two defaults",
			patch: `{cloudProviderSpec: {virtualMachine: {networks: [
				{name: net-a, default: true}, {name: "infra/net_b"}, {name: net-a}, {name: "a/b/c"}, {name: net-c, default: true}]}}}`,
			want: msg(
				pVM+`.networks[1].name: Invalid value: "infra/net_b": must be namespace/name or name; the name: a lowercase RFC 1123 `+
					`label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric `+
					`character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
				pVM+`.networks[2].name: Invalid value: "net-a": duplicates networks[0]`,
				pVM+`.networks[3].name: Invalid value: "a/b/c": must be namespace/name or name`,
				pVM+`.networks[4].default: Invalid value: true: at most one network may be the default; networks[0] already is`,
			),
		},
		{
			name:  "unknown network binding",
			patch: `{cloudProviderSpec: {virtualMachine: {networks: [{name: fast-net, binding: macvtap}]}}}`,
			want:  msg(pVM + `.networks[0].binding: Unsupported value: "macvtap": supported values: "bridge", "sriov"`),
		},
		{
			name: "passthrough devices: missing names, duplicate, bad resource name",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {
				gpus: [{name: gpu1, deviceName: nvidia.com/T4}, {deviceName: nvidia.com/T4}],
				hostDevices: [{name: gpu1, deviceName: "example.com/nvme drive"}, {name: nvme2}]}}}}`,
			want: msg(
				pT+`.gpus[1].name: Required value: the device's name in the VM`,
				pT+`.hostDevices[0].name: Invalid value: "gpu1": duplicates `+pT+`.gpus[0]`,
				pT+`.hostDevices[0].deviceName: Invalid value: "example.com/nvme drive": name part must consist of alphanumeric `+
					`characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  `+
					`or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
				pT+`.hostDevices[1].deviceName: Required value: the resource name the infra device plugin advertises, such as `+
					`nvidia.com/TU104GL_Tesla_T4`,
			),
		},
		{
			name:  "zone and zones together, duplicate zone",
			patch: `{cloudProviderSpec: {virtualMachine: {location: {region: eu, zone: eu-1, zones: [eu-1, eu-2, eu-1]}}}}`,
			want: msg(
				pVM+`.location.zones[2]: Duplicate value: "eu-1"`,
				pVM+`.location.zones: Forbidden: may not be set together with zone`,
			),
		},
	}
}

func schedulingCases(testing.TB) []invalidCase {
	return []invalidCase{
		{
			name:  "node selector with a bad key and value",
			patch: `{cloudProviderSpec: {virtualMachine: {nodeSelector: {"ok/key": fine, "bad key": "bad value"}}}}`,
			want: msg(
				pVM+`.nodeSelector[bad key]: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' `+
					`or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex `+
					`used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
				pVM+`.nodeSelector[bad key]: Invalid value: "bad value": a valid label must be an empty string or consist of `+
					`alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. `+
					`'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
			),
		},
		{
			name: "tolerations: unknown operator and effect, Exists with a value, Equal without key, seconds without NoExecute",
			patch: `{cloudProviderSpec: {virtualMachine: {tolerations: [
				{key: dedicated, operator: In, value: kubevirt},
				{key: dedicated, operator: Exists, value: kubevirt, effect: NoSchedule},
				{value: kubevirt},
				{key: dedicated, operator: Exists, effect: Evict},
				{key: dedicated, operator: Exists, effect: NoSchedule, tolerationSeconds: 30}]}}}`,
			want: msg(
				pVM+`.tolerations[0].operator: Unsupported value: "In": supported values: "Equal", "Exists"`,
				pVM+`.tolerations[1].value: Invalid value: "kubevirt": must be empty when operator is Exists`,
				pVM+`.tolerations[2].operator: Invalid value: "": must be Exists when key is empty`,
				pVM+`.tolerations[3].effect: Unsupported value: "Evict": supported values: "", "NoSchedule", "PreferNoSchedule", "NoExecute"`,
				pVM+`.tolerations[4].tolerationSeconds: Invalid value: 30: may only be set with effect NoExecute`,
			),
		},
		{
			name:  "pod affinity and anti-affinity together",
			patch: `{cloudProviderSpec: {affinity: {podAffinityPreset: soft, podAntiAffinityPreset: hard}}}`,
			want: msg(pC + `.affinity.podAntiAffinityPreset: Forbidden: podAffinityPreset and podAntiAffinityPreset are mutually ` +
				`exclusive; set at most one of them`),
		},
		{
			name:  "unknown preset type",
			patch: `{cloudProviderSpec: {affinity: {podAffinityPreset: always}}}`,
			want:  msg(pC + `.affinity.podAffinityPreset: Unsupported value: "always": supported values: "", "soft", "hard"`),
		},
		{
			name:  "hard node affinity without key",
			patch: `{cloudProviderSpec: {affinity: {nodeAffinityPreset: {type: hard, values: [ssd]}}}}`,
			want:  msg(pC + `.affinity.nodeAffinityPreset.key: Required value: the infra node label key to match`),
		},
		{
			name:  "node anti-affinity with a bad key and value",
			patch: `{cloudProviderSpec: {affinity: {nodeAntiAffinityPreset: {type: soft, key: "disk type", values: ["a b"]}}}}`,
			want: msg(
				pC+`.affinity.nodeAntiAffinityPreset.key: Invalid value: "disk type": name part must consist of alphanumeric `+
					`characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or `+
					`'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
				pC+`.affinity.nodeAntiAffinityPreset.values[0]: Invalid value: "a b": a valid label must be an empty string or `+
					`consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character `+
					`(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
			),
		},
		{
			name:  "maxSkew not an integer",
			patch: `{cloudProviderSpec: {topologySpreadConstraints: [{maxSkew: x, topologyKey: kubernetes.io/hostname}]}}`,
			want:  msg(pC + `.topologySpreadConstraints[0].maxSkew: Invalid value: "x": must be a decimal integer`),
		},
		{
			name:  "maxSkew zero",
			patch: `{cloudProviderSpec: {topologySpreadConstraints: [{maxSkew: 0, topologyKey: kubernetes.io/hostname}]}}`,
			want:  msg(pC + `.topologySpreadConstraints[0].maxSkew: Invalid value: "0": must be at least 1`),
		},
		{
			name:  "topology key missing, bad whenUnsatisfiable",
			patch: `{cloudProviderSpec: {topologySpreadConstraints: [{maxSkew: "1", whenUnsatisfiable: Never}]}}`,
			want: msg(
				pC+`.topologySpreadConstraints[0].topologyKey: Required value: an infra node label key such as kubernetes.io/hostname`,
				pC+`.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Never": supported values: "DoNotSchedule", "ScheduleAnyway"`,
			),
		},
		{
			name: "duplicate spread constraint",
			patch: `{cloudProviderSpec: {topologySpreadConstraints: [{topologyKey: topology.kubernetes.io/zone},
				{maxSkew: "2", topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}]}}`,
			want: msg(pC + `.topologySpreadConstraints[1].topologyKey: Invalid value: "topology.kubernetes.io/zone": duplicates ` +
				`topologySpreadConstraints[0]: each topologyKey and whenUnsatisfiable pair may appear once`),
		},
	}
}

func tuningCases(testing.TB) []invalidCase {
	return []invalidCase{
		{
			name:  "unknown I/O threads policy",
			patch: `{cloudProviderSpec: {virtualMachine: {tuning: {ioThreadsPolicy: supplementalPool}}}}`,
			want:  msg(pVM + `.tuning.ioThreadsPolicy: Unsupported value: "supplementalPool": supported values: "shared", "auto"`),
		},
		{
			name:  "emulator thread isolation without dedicated CPUs",
			patch: `{cloudProviderSpec: {virtualMachine: {tuning: {cpu: {isolateEmulatorThread: true}}}}}`,
			want:  msg(pVM + `.tuning.cpu.isolateEmulatorThread: Invalid value: true: requires dedicatedCpuPlacement: true`),
		},
		{
			name:  "dedicated CPUs with fractional cpus",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {cpus: 1500m}, tuning: {cpu: {dedicatedCpuPlacement: true}}}}}`,
			want:  msg(pVM + `.tuning.cpu.dedicatedCpuPlacement: Invalid value: true: needs a whole number of CPUs, but virtualMachine.template.cpus is 1500m`),
		},
		{
			name:  "dedicated CPUs other than the topology's vCPUs",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {cpus: "2"}, tuning: {cpu: {cores: 2, sockets: 2, threads: 1, dedicatedCpuPlacement: true}}}}}`,
			want:  msg(pT + `.cpus: Invalid value: "2": must equal the vCPUs of tuning.cpu (cores × sockets × threads = 4) with dedicatedCpuPlacement: each vCPU is pinned to a host CPU`),
		},
		{
			name:  "dedicated CPUs with three threads per core",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {cpus: "3"}, tuning: {cpu: {cores: 1, threads: 3, dedicatedCpuPlacement: true}}}}}`,
			want:  msg(pVM + `.tuning.cpu.threads: Invalid value: 3: must be at most 2 with dedicatedCpuPlacement`),
		},
		{
			name:  "dedicated CPUs sized by nothing",
			patch: `{cloudProviderSpec: {virtualMachine: {flavor: {name: small}, template: {cpus: null, memory: null}, tuning: {cpu: {dedicatedCpuPlacement: true}}}}}`,
			want:  msg(pT + `.cpus: Required value: a whole number of CPUs, or tuning.cpu cores, with dedicatedCpuPlacement`),
		},
		{
			name:  "CPU topology and guest memory with an instancetype",
			patch: `{cloudProviderSpec: {virtualMachine: {instancetype: {name: u1.medium}, template: {cpus: null, memory: null}, tuning: {cpu: {cores: 2, threads: 1}, memory: {guest: 1Gi}}}}}`,
			want: msg(pVM+`.tuning.cpu.cores: Forbidden: the instancetype sets the CPU topology`,
				pVM+`.tuning.cpu.threads: Forbidden: the instancetype sets the CPU topology`,
				pVM+`.tuning.memory.guest: Forbidden: the instancetype sets the guest memory`),
		},
		{
			name:  "CPU cores disagree with vcpus",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {cpus: null, vcpus: {cores: 4}}, tuning: {cpu: {cores: 2}}}}}`,
			want:  msg(pVM + `.tuning.cpu.cores: Invalid value: 2: must equal virtualMachine.template.vcpus.cores (4) when both are set`),
		},
		{
			name:  "unknown hugepage size",
			patch: `{cloudProviderSpec: {virtualMachine: {tuning: {memory: {hugepages: {pageSize: 4Ki}}}}}}`,
			want:  msg(pVM + `.tuning.memory.hugepages.pageSize: Unsupported value: "4Ki": supported values: "2Mi", "1Gi"`),
		},
		{
			name:  "memory not a whole number of 2Mi hugepages",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {memory: 2048M}, tuning: {memory: {hugepages: {pageSize: 2Mi}}}}}}`,
			want: msg(pT + `.memory: Invalid value: "2048M": must be a whole number of hugepages of 2Mi ` +
				`(tuning.memory.hugepages.pageSize), such as 1954Mi`),
		},
		{
			name:  "memory below one 1Gi hugepage",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {memory: 512Mi}, tuning: {memory: {hugepages: {pageSize: 1Gi}}}}}}`,
			want:  msg(pT + `.memory: Invalid value: "512Mi": must be at least one hugepage (tuning.memory.hugepages.pageSize 1Gi)`),
		},
		{
			name:  "guest memory above the memory",
			patch: `{cloudProviderSpec: {virtualMachine: {tuning: {memory: {guest: 8Gi}}}}}`,
			want:  msg(pVM + `.tuning.memory.guest: Invalid value: "8Gi": must not exceed virtualMachine.template.memory (4Gi)`),
		},
		{
			name: "disk tuning for an unknown disk, bad bus and cache",
			patch: `{cloudProviderSpec: {virtualMachine: {
				template: {secondaryDisks: [{name: data, size: 5Gi, storageClassName: fast}]},
				tuning: {devices: {disks: [{name: volume-1}, {name: data, disk: {bus: ide}, cache: unsafe}, {name: data}]}}}}}`,
			want: msg(
				pVM+`.tuning.devices.disks[0].name: Unsupported value: "volume-1": supported values: "root-disk", "data"`,
				pVM+`.tuning.devices.disks[1].disk.bus: Unsupported value: "ide": supported values: "virtio", "sata", "scsi", "usb"`,
				pVM+`.tuning.devices.disks[1].cache: Unsupported value: "unsafe": supported values: "none", "writethrough", "writeback"`,
				pVM+`.tuning.devices.disks[2].name: Duplicate value: "data"`,
			),
		},
	}
}

func legacyCases(t testing.TB) []invalidCase {
	t.Helper()
	// flatCentOS is a providerSpec in the flat format of KKP 2.20 and
	// older, with CentOS and an empty kubeconfig.
	const flatCentOS = `
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
  sourceURL: http://10.107.208.71/centos.img
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
operatingSystem: centos
operatingSystemSpec:
  distUpgradeOnBoot: false
sshPublicKeys:
- ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAACAQDA helene@example
`
	return []invalidCase{
		{
			name:  "flat format: CentOS and no kubeconfig",
			input: yamlJSON(t, flatCentOS),
			want: msg(
				pV+`.operatingSystem: Unsupported value: "centos": supported values: "ubuntu", "rhel", "flatcar", "rockylinux"`,
				pC+`.kubeconfig: Required value: set it (base64-encoded) or the KUBEVIRT_KUBECONFIG environment variable of the controller`,
			),
		},
		{
			name:  "flat and nested format mixed",
			input: yamlJSON(t, `{cloudProvider: kubevirt, cloudProviderSpec: {cpus: "1", memory: 2Gi, virtualMachine: {}, auth: {}}}`),
			want: msg(pC + `: Forbidden: the flat format of KKP <= 2.20 (fields: cpus, memory) cannot be mixed with the nested ` +
				`format (fields: auth, virtualMachine); use only the nested format`),
		},
		{
			name:  "flat format with an unknown field",
			input: yamlJSON(t, `{cloudProvider: kubevirt, cloudProviderSpec: {cpus: "1", registryImage: x}}`),
			want: msg(pC + `: Invalid value: "registryImage": unknown field (known fields: clusterName, cpus, dnsConfig, ` +
				`dnsPolicy, kubeconfig, memory, namespace, nodeAffinityPreset, nodeAntiAffinityPreset, podAffinityPreset, ` +
				`podAntiAffinityPreset, pvcSize, sourceURL, storageClassName)`),
		},
		{
			name: "flat format errors name the flat fields",
			input: yamlJSON(t, `{cloudProvider: kubevirt, operatingSystem: ubuntu, operatingSystemSpec: {},
				cloudProviderSpec: {kubeconfig: "apiVersion: v1", cpus: "1", memory: 2Gi, pvcSize: ten, storageClassName: local-path,
				sourceURL: "http://images/ubuntu.img", podAffinityPreset: soft, podAntiAffinityPreset: soft}}`),
			want: msg(
				pC+`.kubeconfig: Invalid value: must be a base64-encoded kubeconfig in YAML or JSON format: illegal base64 data at input byte 10`,
				pC+`.pvcSize: Invalid value: "ten": must be a Kubernetes quantity such as 10Gi`,
				pC+`.podAntiAffinityPreset: Forbidden: podAffinityPreset and podAntiAffinityPreset are mutually exclusive; set at most one of them`,
			),
		},
	}
}
