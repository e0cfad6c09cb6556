package main

import (
	"bytes"
	"encoding/base64"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

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
		name    string
		args    []string
		stdin   string
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
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tc.wantErr)
				}
				got = "error: " + err.Error() + "\n"
			} else if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			compareGolden(t, filepath.Join("testdata", "golden", tc.name+".txt"), got)
		})
	}
}

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing golden file (run with -update): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("output differs from %s (-want +got):\n%s", path, diff)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
