package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/golden"
)

// testKubeconfig is an infra kubeconfig for a server that is never contacted.
const testKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: infra
  cluster:
    server: https://infra.invalid:6443
contexts:
- name: infra
  context:
    cluster: infra
    user: admin
    namespace: cluster-from-kubeconfig
current-context: infra
users:
- name: admin
  user:
    token: not-a-real-token
`

func TestRender(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		stdin string
		// golden names the golden file when it is not the case's name.
		golden  string
		wantErr string
	}{
		{name: "example-md", args: []string{"render", "-f", "../../examples/machinedeployment.yaml"}},
		{name: "example-md-json", args: []string{"render", "-f", "../../examples/machinedeployment.yaml", "-o", "json"}},
		{name: "example-md-namespace", args: []string{"render", "-f", "-", "--namespace", "cluster-override"}, stdin: readFile(t, "../../examples/machinedeployment.yaml")},
		{name: "machineset-and-machine", args: []string{"render", "-f", "testdata/machineset-and-machine.yaml"}},
		{name: "invalid", args: []string{"render", "-f", "testdata/invalid.yaml"}, wantErr: "MachineDeployment kube-system/broken:"},
		{name: "wrong-kind", args: []string{"render", "-f", "testdata/wrong-kind.yaml"}, wantErr: `kind "ConfigMap" is not supported`},
		{name: "bad-output", args: []string{"render", "-f", "testdata/invalid.yaml", "-o", "toml"}, wantErr: `output "toml" is not supported`},
		{name: "no-input", args: []string{"render"}, wantErr: "no input"},
		{name: "missing-file", args: []string{"render", "-f", "testdata/does-not-exist.yaml"}, wantErr: "failed to open input"},
		// Lists, as kubectl get -o yaml|json and the API server print them, render
		// exactly as their items would.
		{name: "list", args: []string{"render", "-f", "testdata/list.yaml"}, golden: "machineset-and-machine"},
		{name: "list-stdin-json", args: []string{"render", "-f", "-"}, stdin: listJSON(t, "testdata/list.yaml"), golden: "machineset-and-machine"},
		{name: "typed-lists", args: []string{"render", "-f", "testdata/typed-lists.yaml"}, golden: "machineset-and-machine"},
		{name: "list-invalid", args: []string{"render", "-f", "testdata/list-invalid.yaml"}, wantErr: "testdata/list-invalid.yaml: document 1: items[1]: MachineDeployment kube-system/broken: "},
		{name: "list-wrong-kind", args: []string{"render", "-f", "-"}, stdin: machineDoc + "\n---\n" + listOf(machineDoc, "{apiVersion: v1, kind: ConfigMap, metadata: {name: x}}"), wantErr: `stdin: document 2: items[1]: kind "ConfigMap" is not supported`},
		{name: "list-item-not-object", args: []string{"render", "-f", "-"}, stdin: listOf(machineDoc, `"workers"`), wantErr: "stdin: document 1: items[1]: must be an object"},
		{name: "list-item-without-kind", args: []string{"render", "-f", "-"}, stdin: listOf("{metadata: {name: x}}"), wantErr: "stdin: document 1: items[0]: kind is missing"},
		{name: "nested-list", args: []string{"render", "-f", "-"}, stdin: listOf(listOf("{apiVersion: v1, kind: Secret}")), wantErr: "stdin: document 1: items[0].items[0]: kind \"Secret\""},
		{name: "own-json-output", args: []string{"render", "-f", "-"}, stdin: readFile(t, "testdata/golden/example-md-json.txt"), wantErr: `stdin: document 1: items[0]: kind "VirtualMachine" is not supported`},
		// Input without a single object is an error, not an empty success.
		{name: "empty-file", args: []string{"render", "-f", "testdata/empty.yaml"}, wantErr: "no MachineDeployment, MachineSet or Machine found in testdata/empty.yaml"},
		{name: "empty-stdin", args: []string{"render", "-f", "-"}, wantErr: "no MachineDeployment, MachineSet or Machine found in stdin"},
		{name: "empty-list", args: []string{"render", "-f", "-"}, stdin: "apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: \"\"\n", wantErr: "no MachineDeployment, MachineSet or Machine found in stdin"},
		{name: "empty-second-file", args: []string{"render", "-f", "testdata/machineset-and-machine.yaml", "-f", "testdata/empty.yaml"}, wantErr: "found in testdata/empty.yaml"},
		// Warnings go to stderr; stdout stays parseable.
		{name: "legacy", args: []string{"render", "-f", "testdata/legacy.yaml"}},
		{name: "legacy-json", args: []string{"render", "-f", "testdata/legacy.yaml", "-o", "json"}},
		// The VM patch hatch: applied to the rendered VM, refused when it
		// touches what the provider relies on.
		{name: "vm-patch", args: []string{"render", "-f", "testdata/vm-patch.yaml"}},
		{name: "ssh-service", args: []string{"render", "-f", "testdata/ssh-service.yaml"}},
		{name: "vm-patch-renamed", args: []string{"render", "-f", "testdata/vm-patch-renamed.yaml"}, wantErr: "annotation kkp-kubevirt.io/vm-patch: must not change metadata.name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBEVIRT_KUBECONFIG", base64.StdEncoding.EncodeToString([]byte(testKubeconfig)))
			t.Setenv("CLUSTER_ID", "")
			t.Setenv("PROJECT_ID", "")
			var out, errOut bytes.Buffer
			cmd := newRootCmd(strings.NewReader(tc.stdin), &out, &errOut)
			cmd.SetArgs(tc.args)
			err := cmd.ExecuteContext(t.Context())
			got := out.String()
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				got = "error: " + err.Error() + "\n"
			case err != nil:
				t.Fatalf("unexpected error: %v", err)
			case slices.Contains(tc.args, "json") && !json.Valid(out.Bytes()):
				t.Errorf("stdout of -o json is not JSON:\n%s", got)
			}
			if errOut.Len() > 0 {
				got += stderrMarker + errOut.String()
			}
			golden := tc.golden
			if golden == "" {
				golden = tc.name
			}
			compareGolden(t, filepath.Join("testdata", "golden", golden+".txt"), got)
		})
	}
}

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	golden.Check(t, path, []byte(got))
}

// stderrMarker separates stdout from stderr in a golden file.
const stderrMarker = "--- stderr ---\n"

// machineDoc is a valid Machine in YAML flow style.
const machineDoc = `{apiVersion: cluster.k8s.io/v1alpha1, kind: Machine, metadata: {name: m}, spec: {providerSpec: {value: {
  cloudProvider: kubevirt, operatingSystem: ubuntu, operatingSystemSpec: {}, cloudProviderSpec: {clusterName: c,
  virtualMachine: {template: {cpus: "1", memory: 2Gi, primaryDisk: {osImage: "http://i/u.img", size: 10Gi}}}}}}}}`

// listOf returns a v1 List of the YAML items.
func listOf(items ...string) string {
	return "{apiVersion: v1, kind: List, items: [" + strings.Join(items, ", ") + "]}\n"
}

// listJSON returns the YAML file as JSON.
func listJSON(t *testing.T, path string) string {
	t.Helper()
	raw, err := yaml.YAMLToJSON([]byte(readFile(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
