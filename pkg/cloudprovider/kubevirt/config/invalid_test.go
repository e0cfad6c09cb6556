package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Field paths used in the expected messages.
const (
	pV  = "spec.providerSpec.value"
	pC  = pV + ".cloudProviderSpec"
	pVM = pC + ".virtualMachine"
	pT  = pVM + ".template"
	pPD = pT + ".primaryDisk"
)

// msg is the message of an *InvalidError with these problems.
func msg(problems ...string) string {
	return "invalid KubeVirt provider spec: " + strings.Join(problems, "; ")
}

type invalidCase struct {
	name string
	// patch is merged into baseSpec unless input is set.
	patch string
	input []byte
	env   map[string]string
	want  string
}

func TestLoadInvalid(t *testing.T) {
	var cases []invalidCase
	for _, group := range []func(testing.TB) []invalidCase{
		parseCases, kubeconfigCases, identityCases, computeCases, diskCases,
		networkCases, schedulingCases, tuningCases, legacyCases, sshServiceCases,
	} {
		cases = append(cases, group(t)...)
	}
	if len(cases) < 45 {
		t.Fatalf("the table must have at least 45 cases, has %d", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			input := tc.input
			if input == nil {
				input = patched(t, tc.patch)
			}
			settings, _, err := Load(t.Context(), input, nil, env(tc.env))
			if err == nil {
				t.Fatalf("expected an error, got settings %+v", settings)
			}
			if !IsInvalid(err) {
				t.Fatalf("expected an *InvalidError, got %T: %v", err, err)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("unexpected message (-want +got):\n%s", diff)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("the message contains the kubeconfig token: %s", err)
			}
		})
	}
}

func parseCases(t testing.TB) []invalidCase {
	t.Helper()
	return []invalidCase{
		{name: "empty input", input: []byte{}, want: msg(pV + ": Required value")},
		{name: "null", input: []byte("null"), want: msg(pV + ": Required value")},
		{name: "truncated JSON", input: []byte("{"), want: msg(pV + ": Invalid value: must be a JSON object: unexpected EOF")},
		{name: "list instead of object", input: []byte("[]"), want: msg(pV + ": Invalid value: must be an object, not a list")},
		{name: "two documents", input: []byte("{} {}"), want: msg(pV + ": Invalid value: must be a single JSON object, found data after it")},
		{
			name:  "unknown envelope field",
			patch: `{cloudProviderConfig: {}}`,
			want: msg(pV + `: Invalid value: "cloudProviderConfig": unknown field (known fields: caPublicKey, cloudProvider, ` +
				`cloudProviderSpec, network, operatingSystem, operatingSystemSpec, overwriteCloudConfig, sshPublicKeys)`),
		},
		{
			name:  "other cloud provider",
			patch: `{cloudProvider: aws}`,
			want:  msg(pV + `.cloudProvider: Unsupported value: "aws": supported values: "kubevirt"`),
		},
		{
			name: "duplicate keys, ignoring case and the opaque operatingSystemSpec",
			input: []byte(`{"cloudProvider": "kubevirt", "operatingSystem": "ubuntu", "operatingSystemSpec": {"a": 1, "a": 2},
				"cloudProviderSpec": {"clusterName": "a", "ClusterName": "b"}}`),
			want: msg(pC + `: Invalid value: "ClusterName": duplicate field (also given as "clusterName"); each field may appear once, ignoring case`),
		},
		{name: "cloud provider not a string", patch: `{cloudProvider: 1}`, want: msg(pV + `.cloudProvider: Invalid value: 1: must be a string, not a number`)},
		{name: "cloud provider missing", patch: `{cloudProvider: null}`, want: msg(pV + `.cloudProvider: Required value: must be "kubevirt"`)},
		{name: "cloudProviderSpec missing", patch: `{cloudProviderSpec: null}`, want: msg(pC + ": Required value")},
		{name: "cloudProviderSpec is a string", patch: `{cloudProviderSpec: abc}`, want: msg(pC + `: Invalid value: "abc": must be an object, not a string`)},
		{
			name:  "misspelled field with a suggestion",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {cpu: "2"}}}}`,
			want:  msg(pT + `: Invalid value: "cpu": unknown field (did you mean "cpus"?)`),
		},
		{
			name:  "every unknown field at once",
			patch: `{cloudProviderSpec: {zone: a, virtualMachine: {evictionstrategy: External, template: {primaryDisk: {image: x}}}}}`,
			want: msg(
				pPD+`: Invalid value: "image": unknown field (did you mean "osImage"?)`,
				pC+`: Invalid value: "zone": unknown field (known fields: affinity, auth, clusterName, projectID, topologySpreadConstraints, virtualMachine)`,
			),
		},
		{
			name:  "string where an integer belongs",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {vcpus: {cores: "2"}}}}}`,
			want:  msg(pT + `.vcpus.cores: Invalid value: "2": must be an integer, not a string`),
		},
		{
			name:  "fraction where an integer belongs",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {vcpus: {cores: 1.5}}}}}`,
			want:  msg(pT + `.vcpus.cores: Invalid value: 1.5: must be an integer between -9223372036854775808 and 9223372036854775807`),
		},
		{
			name:  "negative unsigned integer",
			patch: `{cloudProviderSpec: {virtualMachine: {tuning: {cpu: {sockets: -1}}}}}`,
			want:  msg(pVM + `.tuning.cpu.sockets: Invalid value: -1: must be a non-negative integer between 0 and 4294967295`),
		},
		{
			name:  "list as a ConfigVarString",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {memory: [4Gi]}}}}`,
			want:  msg(pT + `.memory: Invalid value: must be a string or an object with value, secretKeyRef or configMapKeyRef, not a list`),
		},
		{
			name:  "string as a ConfigVarBool",
			patch: `{cloudProviderSpec: {virtualMachine: {enableNetworkMultiQueue: "yes"}}}`,
			want:  msg(pVM + `.enableNetworkMultiQueue: Invalid value: "yes": must be a boolean or an object with value, secretKeyRef or configMapKeyRef, not a string`),
		},
		{
			name:  "string as disablePreAllocatedDataVolumes",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {primaryDisk: {disablePreAllocatedDataVolumes: "off"}}}}}`,
			want:  msg(pPD + `.disablePreAllocatedDataVolumes: Invalid value: "off": must be a boolean or an object with value, secretKeyRef or configMapKeyRef, not a string`),
		},
		{
			name:  "number as a ConfigVarString value",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {cpus: {value: 2}}}}}`,
			want:  msg(pT + `.cpus.value: Invalid value: 2: must be a string, not a number`),
		},
		{
			name:  "unknown operating system",
			patch: `{operatingSystem: centos}`,
			want:  msg(pV + `.operatingSystem: Unsupported value: "centos": supported values: "ubuntu", "rhel", "flatcar", "rockylinux"`),
		},
		{
			name:  "operating system missing",
			patch: `{operatingSystem: null}`,
			want:  msg(pV + `.operatingSystem: Required value: supported values: "ubuntu", "rhel", "flatcar", "rockylinux"`),
		},
		{
			name:  "operatingSystemSpec missing",
			patch: `{operatingSystemSpec: null}`,
			want:  msg(pV + `.operatingSystemSpec: Required value: the operating system settings must be given, for example {distUpgradeOnBoot: false}`),
		},
	}
}

func kubeconfigCases(t testing.TB) []invalidCase {
	t.Helper()
	kubeconfigPatch := func(value string) string {
		return `{cloudProviderSpec: {auth: {kubeconfig: {value: "` + value + `"}}}}`
	}
	const kubeconfigPath = pC + ".auth.kubeconfig"
	return []invalidCase{
		{
			name:  "inline kubeconfig not base64",
			patch: `{cloudProviderSpec: {auth: {kubeconfig: "apiVersion: v1"}}}`,
			want:  msg(kubeconfigPath + ": Invalid value: must be a base64-encoded kubeconfig in YAML or JSON format: illegal base64 data at input byte 10"),
		},
		{
			name:  "inline raw YAML kubeconfig is rejected",
			patch: `{cloudProviderSpec: {auth: {kubeconfig: {value: "` + strings.ReplaceAll(string(testKubeconfig(t)), "\n", `\n`) + `"}}}}`,
			want:  msg(kubeconfigPath + ": Invalid value: must be a base64-encoded kubeconfig in YAML or JSON format: illegal base64 data at input byte 10"),
		},
		{
			name:  "kubeconfig is not YAML",
			patch: kubeconfigPatch(b64([]byte("not: [valid " + testToken))),
			want:  msg(kubeconfigPath + ": Invalid value: must be a kubeconfig in YAML or JSON format, but it could not be parsed"),
		},
		{
			name:  "kubeconfig without current context",
			patch: kubeconfigPatch(b64(testKubeconfig(t, func(c *clientcmdapi.Config) { c.CurrentContext = "" }))),
			want:  msg(kubeconfigPath + ": Invalid value: the kubeconfig must set current-context"),
		},
		{
			name:  "kubeconfig with an undefined current context",
			patch: kubeconfigPatch(b64(testKubeconfig(t, func(c *clientcmdapi.Config) { c.CurrentContext = "elsewhere" }))),
			want:  msg(kubeconfigPath + ": Invalid value: the current context of the kubeconfig is not among its contexts"),
		},
		{
			name:  "kubeconfig cluster without server",
			patch: kubeconfigPatch(b64(testKubeconfig(t, func(c *clientcmdapi.Config) { c.Clusters["infra"].Server = "" }))),
			want:  msg(kubeconfigPath + ": Invalid value: the cluster of the kubeconfig's current context must be defined and have a server"),
		},
		{
			name:  "kubeconfig missing everywhere",
			patch: `{cloudProviderSpec: {auth: null}}`,
			want:  msg(kubeconfigPath + ": Required value: set it (base64-encoded) or the KUBEVIRT_KUBECONFIG environment variable of the controller"),
		},
		{
			name:  "invalid kubeconfig from the environment",
			patch: `{cloudProviderSpec: {auth: null}}`,
			env:   map[string]string{"KUBEVIRT_KUBECONFIG": "token: " + testToken},
			want: msg(kubeconfigPath + ": Invalid value: the kubeconfig must set current-context " +
				"(from the KUBEVIRT_KUBECONFIG environment variable)"),
		},
	}
}

func identityCases(testing.TB) []invalidCase {
	return []invalidCase{
		{
			name:  "cluster name is not a label value",
			patch: `{cloudProviderSpec: {clusterName: "my cluster"}}`,
			want: msg(pC + `.clusterName: Invalid value: "my cluster": a valid label must be an empty string or consist of alphanumeric ` +
				`characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  ` +
				`or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`),
		},
		{
			name: "CLUSTER_ID is not a label value",
			env:  map[string]string{"CLUSTER_ID": "-abc"},
			want: msg(pC + `.clusterName: Invalid value: "-abc": a valid label must be an empty string or consist of alphanumeric ` +
				`characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  ` +
				`or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?') ` +
				`(from the CLUSTER_ID environment variable)`),
		},
		{
			name:  "namespace is not a DNS label",
			patch: `{cloudProviderSpec: {auth: {namespace: Tenant_A}}}`,
			want: msg(pC + `.auth.namespace: Invalid value: "Tenant_A": a lowercase RFC 1123 label must consist of lower case ` +
				`alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or ` +
				`'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`),
		},
		{
			name:  "incomplete secret reference",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {cpus: {secretKeyRef: {name: sizes}}}}}}`,
			want: msg(
				pT+`.cpus.secretKeyRef.namespace: Required value: a reference needs namespace, name and key`,
				pT+`.cpus.secretKeyRef.key: Required value: a reference needs namespace, name and key`,
				pT+`.cpus: Required value: a Kubernetes quantity such as 2 or 500m, unless vcpus.cores, virtualMachine.instancetype or virtualMachine.flavor is set`,
			),
		},
	}
}

func computeCases(testing.TB) []invalidCase {
	return []invalidCase{
		{
			name:  "memory is not a quantity",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {memory: 2GB}}}}`,
			want:  msg(pT + `.memory: Invalid value: "2GB": must be a Kubernetes quantity such as 2Gi or 4096M`),
		},
		{
			name:  "memory missing",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {memory: null}}}}`,
			want:  msg(pT + `.memory: Required value: a Kubernetes quantity such as 2Gi or 4096M`),
		},
		{
			name:  "cpus zero",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {cpus: "0"}}}}`,
			want:  msg(pT + `.cpus: Invalid value: "0": must be greater than zero`),
		},
		{
			name:  "cpus together with vcpus",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {vcpus: {cores: 2}}}}}`,
			want:  msg(pT + `.cpus: Forbidden: may not be set together with vcpus.cores; set one of them`),
		},
		{
			name:  "negative vcpus",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {cpus: null, vcpus: {cores: -2}}}}}`,
			want:  msg(pT + `.vcpus.cores: Invalid value: -2: must be greater than zero`),
		},
		{
			name:  "instancetype without name",
			patch: `{cloudProviderSpec: {virtualMachine: {instancetype: {kind: VirtualMachineInstancetype}}}}`,
			want:  msg(pVM + `.instancetype.name: Required value: or inferFromVolume`),
		},
		{
			name:  "instancetype named and inferred",
			patch: `{cloudProviderSpec: {virtualMachine: {instancetype: {name: u1.medium, inferFromVolume: datavolumedisk}}}}`,
			want:  msg(pVM + `.instancetype.inferFromVolume: Forbidden: may not be set together with name: KubeVirt infers the name from the volume`),
		},
		{
			name:  "preference of a kind and inferred",
			patch: `{cloudProviderSpec: {virtualMachine: {preference: {kind: VirtualMachinePreference, inferFromVolume: datavolumedisk}}}}`,
			want:  msg(pVM + `.preference.inferFromVolume: Forbidden: may not be set together with kind: KubeVirt infers the kind from the volume`),
		},
		{
			name:  "instancetype inferred from a volume the VM has not",
			patch: `{cloudProviderSpec: {virtualMachine: {instancetype: {inferFromVolume: root-disk}}}}`,
			want:  msg(pVM + `.instancetype.inferFromVolume: Unsupported value: "root-disk": supported values: "datavolumedisk"`),
		},
		{
			name:  "unknown inference failure policy",
			patch: `{cloudProviderSpec: {virtualMachine: {preference: {inferFromVolume: datavolumedisk, inferFromVolumeFailurePolicy: Skip}}}}`,
			want:  msg(pVM + `.preference.inferFromVolumeFailurePolicy: Unsupported value: "Skip": supported values: "Ignore", "Reject"`),
		},
		{
			name:  "instancetype of a preference kind",
			patch: `{cloudProviderSpec: {virtualMachine: {instancetype: {name: u1.medium, kind: VirtualMachinePreference}}}}`,
			want: msg(pVM + `.instancetype.kind: Unsupported value: "VirtualMachinePreference": supported values: ` +
				`"VirtualMachineInstancetype", "VirtualMachineClusterInstancetype"`),
		},
		{
			name:  "preference of an unknown kind",
			patch: `{cloudProviderSpec: {virtualMachine: {preference: {name: ubuntu, kind: Preference}}}}`,
			want: msg(pVM + `.preference.kind: Unsupported value: "Preference": supported values: ` +
				`"VirtualMachinePreference", "VirtualMachineClusterPreference"`),
		},
		{
			name:  "flavor name is not an object name",
			patch: `{cloudProviderSpec: {virtualMachine: {flavor: {name: "Standard 2"}}}}`,
			want: msg(pVM + `.flavor.name: Invalid value: "Standard 2": a lowercase RFC 1123 subdomain must consist of lower case ` +
				`alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', ` +
				`regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`),
		},
		{
			name:  "eviction strategy None",
			patch: `{cloudProviderSpec: {virtualMachine: {evictionStrategy: None}}}`,
			want: msg(pVM + `.evictionStrategy: Unsupported value: "None": supported values: "External", "LiveMigrate", ` +
				`"LiveMigrateIfPossible"`),
		},
	}
}
