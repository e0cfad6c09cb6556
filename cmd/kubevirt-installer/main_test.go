package main

import (
	"bytes"
	"flag"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/golden"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// testEnv is the API server of the command tests and testClient reaches
// it with the installer's scheme, both set once a test asked for the
// cluster (requireEnv).
var (
	testEnv    *envtest.Env
	testClient ctrlruntimeclient.Client
	cluster    = envtest.NewShared(func(env *envtest.Env) error {
		c, err := installer.NewClient(env.Config)
		testEnv, testClient = env, c
		return err
	}, envtest.WithControllerManager(), envtest.WithCRDFiles())
)

func TestMain(m *testing.M) {
	flag.Parse()
	ctrllog.SetLogger(logr.Discard())
	envtest.Main(m, cluster)
}

// requireEnv starts the shared API server on first use and returns it; it
// skips the test when SKIP_ENVTEST=true.
func requireEnv(t *testing.T) *envtest.Env {
	t.Helper()
	return cluster.Env(t)
}

// execute runs the command line args and returns its output.
func execute(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := newRootCommand(&out, &errOut, nil)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(t.Context())
	return out.String(), err
}

// checkGolden compares got with testdata/name, or rewrites it with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), []byte(got))
}

func TestOfflineCommandsGolden(t *testing.T) {
	tests := []struct {
		golden string
		args   []string
	}{
		{"template.golden", []string{"template"}},
		{"template-emulation-without-network.golden", []string{
			"template", "--skip", "cni-plugins,multus", "--use-emulation", "--monitor-namespace", "monitoring",
			"--workload-node-selector", "kubevirt.io/kvm=true", "--importer-https-proxy", "http://proxy.local:3128",
			"--set", "kubevirt.extraFeatureGates={VMExport}",
		}},
		{"images.golden", []string{"images"}},
		{"images-without-network.golden", []string{"images", "--skip", "cni-plugins,multus"}},
		{"images-relocated.golden", []string{"images", "--registry", "registry.airgap.local:5000/mirror"}},
		{"template-relocated.golden", []string{"template", "--registry", "registry.airgap.local:5000/mirror"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			out, err := execute(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tt.golden, out)
		})
	}
}

func TestConfigurationErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"template", "--skip", "kubevirt-csi"}, `unknown component "kubevirt-csi"`},
		{[]string{"template", "--set", "kubevirt.images.operator=evil/op:1"}, "images are pinned per version"},
		{[]string{"template", "--set", "kubevirt.uninstallStrategy=Never"}, "uninstallStrategy"},
		{[]string{"template", "--config", "testdata/does-not-exist.yaml"}, "failed to read configuration"},
	}
	for _, tt := range tests {
		_, err := execute(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want one containing %q", tt.args, err, tt.want)
		}
	}
}

func TestVersion(t *testing.T) {
	out, err := execute(t, "--version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "kubevirt-installer version ") || !strings.Contains(out, ", commit ") || !strings.Contains(out, runtime.Version()) {
		t.Errorf("--version printed %q, want the version, commit and Go version", out)
	}
}
