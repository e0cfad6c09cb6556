package main

import (
	"bytes"
	"context"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"

	certutil "k8s.io/client-go/util/cert"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/kkp"
)

// kkpDir writes a user-cluster kubeconfig and a CA bundle into a
// temporary directory and returns it.
func kkpDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := `apiVersion: v1
kind: Config
current-context: user
contexts: [{name: user, context: {cluster: user, user: admin}}]
clusters: [{name: user, cluster: {server: "https://user.example:6443"}}]
users: [{name: admin, user: {token: t}}]
`
	certPEM, _, err := certutil.GenerateSelfSignedCertKey("ca.example", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"kubeconfig": []byte(kubeconfig), "ca-bundle.pem": certPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func getenvOf(env map[string]string) func(string) string {
	return func(key string) string { return env[key] }
}

// TestKKPControllerCommandLine: Kubermatic's command line of
// machine-controller gives the options Kubermatic means by it.
func TestKKPControllerCommandLine(t *testing.T) {
	dir := kkpDir(t)
	var errOut bytes.Buffer
	opts, common, err := kkpControllerOptions(kkp.ControllerArgs(dir), getenvOf(map[string]string{"POD_NAMESPACE": "cluster-xyz"}), &errOut)
	if err != nil {
		t.Fatal(err)
	}
	if opts.UserConfig.Host != "https://user.example:6443" {
		t.Errorf("user cluster = %q, want the -kubeconfig's", opts.UserConfig.Host)
	}
	for name, got := range map[string]any{
		"HealthAddress": opts.HealthAddress, "MetricsAddress": opts.MetricsAddress, "InfraNamespace": opts.InfraNamespace,
		"NodeCSRApprover": opts.NodeCSRApprover, "LeaderElection": opts.LeaderElection, "LeaderElectionID": opts.LeaderElectionID,
		"LeaderElectionNamespace": opts.LeaderElectionNamespace, "DrainTimeout": opts.DrainTimeout, "WorkerCount": opts.WorkerCount,
	} {
		want := map[string]any{
			"HealthAddress": "0.0.0.0:8085", "MetricsAddress": "0.0.0.0:8080", "InfraNamespace": "cluster-xyz",
			"NodeCSRApprover": true, "LeaderElection": true, "LeaderElectionID": "machine-controller",
			"LeaderElectionNamespace": "kube-system", "DrainTimeout": 2 * time.Hour, "WorkerCount": 10,
		}[name]
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if len(common.noops) != 1 || !strings.HasPrefix(common.noops[0], "-node-external-cloud-provider:") {
		t.Errorf("no-ops = %q, want -node-external-cloud-provider", common.noops)
	}
	if common.caBundle != filepath.Join(dir, "ca-bundle.pem") {
		t.Errorf("-ca-bundle = %q", common.caBundle)
	}
}

// TestKKPWebhookCommandLine: Kubermatic's command line of the webhook
// gives the options Kubermatic means by it.
func TestKKPWebhookCommandLine(t *testing.T) {
	dir := kkpDir(t)
	for _, tc := range []struct {
		env           map[string]string
		wantNamespace string
	}{
		{env: map[string]string{"POD_NAMESPACE": "cluster-pod"}, wantNamespace: "cluster-pod"},
		{env: map[string]string{}, wantNamespace: "cluster-xyz"},
	} {
		opts, common, err := kkpWebhookOptions(kkp.WebhookArgs(dir, "cluster-xyz"), getenvOf(tc.env), &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if opts.UserConfig.Host != "https://user.example:6443" || opts.Host != "0.0.0.0" || opts.Port != 9876 ||
			opts.CertFile != filepath.Join(dir, "cert.pem") || opts.KeyFile != filepath.Join(dir, "key.pem") ||
			opts.InfraNamespace != tc.wantNamespace || opts.SelfManaged != nil {
			t.Errorf("options = user %q, %s:%d, cert %s, key %s, infra namespace %q, self-managed %v", opts.UserConfig.Host,
				opts.Host, opts.Port, opts.CertFile, opts.KeyFile, opts.InfraNamespace, opts.SelfManaged)
		}
		if opts.KubeletVersions == nil || !opts.KubeletVersions.Check(mustVersion(t, "1.33.4")) {
			t.Errorf("kubelet versions = %v, want the default >=0.0.0", opts.KubeletVersions)
		}
		if len(common.noops) != 2 {
			t.Errorf("no-ops = %q, want the two node flags", common.noops)
		}
	}
}

// TestKKPEveryUpstreamFlag: every flag Kubermatic's machine-controller and
// webhook v1.60 to v1.66 define is accepted.
func TestKKPEveryUpstreamFlag(t *testing.T) {
	dir := kkpDir(t)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	controllerFlags := []string{"-kubeconfig", kubeconfig, "-master", "https://user.example:6443", "-cluster-dns", "10.10.10.10",
		"-worker-count", "4", "-health-probe-address", ":8085", "-metrics-address", ":8080", "-name", "kubevirt",
		"-enable-leader-election=false", "-leader-election-namespace", "kube-public", "-join-cluster-timeout", "25m",
		"-bootstrap-token-service-account-name", "kube-system/bootstrap", "-enable-profiling", "-skip-eviction-after", "30m",
		"-use-external-bootstrap", "-override-bootstrap-kubelet-apiserver", "https://lb:6443", "-ca-bundle", filepath.Join(dir, "ca-bundle.pem"),
		"-node-csr-approver=false", "-node-port-range", "30000-32767", "-node-http-proxy", "http://proxy:3128", "-node-no-proxy", "10.0.0.0/8",
		"-node-insecure-registries", "r.example", "-node-registry-mirrors", "m.example", "-node-pause-image", "pause:3.10",
		"-node-container-runtime", "containerd", "-node-containerd-version", "1.7", "-node-containerd-registry-mirrors", "docker.io=m.example",
		"-node-registry-credentials-secret", "kube-system/creds", "-node-external-cloud-provider", "-node-kubelet-feature-gates", "A=true",
		"-log-debug", "-log-format", "console"}
	opts, common, err := kkpControllerOptions(controllerFlags, getenvOf(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if opts.WorkerCount != 4 || opts.Name != "kubevirt" || opts.LeaderElection || opts.LeaderElectionNamespace != "kube-public" ||
		opts.JoinTimeout != 25*time.Minute || !opts.ProfileOnMetrics || opts.DrainTimeout != 30*time.Minute || opts.NodeCSRApprover {
		t.Errorf("options = %+v", opts)
	}
	if len(common.noops) != 16 {
		t.Errorf("%d no-ops, want 16: %q", len(common.noops), common.noops)
	}
	webhookFlags := []string{"-kubeconfig", kubeconfig, "-master", "https://user.example:6443", "-listen-address", "127.0.0.1:9876",
		"-tls-cert-path", "c", "-tls-key-path", "k", "-ca-bundle", filepath.Join(dir, "ca-bundle.pem"), "-namespace", "cluster-a",
		"-worker-cluster-kubeconfig", kubeconfig, "-kubernetes-version-constraints", ">=1.30.0", "-use-external-bootstrap=true",
		"-node-external-cloud-provider", "-node-kubelet-feature-gates", "A=true", "-log-debug", "-log-format", "json"}
	wopts, _, err := kkpWebhookOptions(webhookFlags, getenvOf(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if wopts.KubeletVersions.Check(mustVersion(t, "1.29.9")) {
		t.Error("-kubernetes-version-constraints >=1.30.0 admits 1.29.9")
	}
}

// TestKKPRefusals: a command line Kubermatic would not write fails at
// start with exit code 2 and a message naming the flag.
func TestKKPRefusals(t *testing.T) {
	dir := kkpDir(t)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("x")}), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"machine-controller", "-kubeconfig", kubeconfig, "-infra-kubeconfig", "x"}, "flag provided but not defined: -infra-kubeconfig"},
		{"stray argument", []string{"machine-controller", "-kubeconfig", kubeconfig, "extra"}, `unexpected argument "extra"`},
		{"bad join timeout", []string{"machine-controller", "-kubeconfig", kubeconfig, "-join-cluster-timeout", "soon"}, `-join-cluster-timeout "soon"`},
		{"zero workers", []string{"machine-controller", "-kubeconfig", kubeconfig, "-worker-count", "0"}, "-worker-count 0: want 1 to 1000"},
		{"bad log format", []string{"machine-controller", "-kubeconfig", kubeconfig, "-log-format", "xml"}, `-log-format "xml"`},
		{"CA bundle without certificates", []string{"machine-controller", "-kubeconfig", kubeconfig, "-ca-bundle", notPEM}, "holds no PEM certificate"},
		{"missing CA bundle", []string{"machine-controller", "-kubeconfig", kubeconfig, "-ca-bundle", filepath.Join(dir, "missing")}, "-ca-bundle"},
		{"webhook: unknown flag", []string{"/usr/local/bin/webhook", "-port", "9443"}, "flag provided but not defined: -port"},
		{"webhook: bad address", []string{"webhook", "-listen-address", "9876"}, `-listen-address "9876": want host:port`},
		{"webhook: bad constraint", []string{"webhook", "-kubernetes-version-constraints", ">>1"}, "-kubernetes-version-constraints"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), tc.args, strings.NewReader(""), &out, &errOut, getenvOf(nil))
			if code != 2 || !strings.Contains(errOut.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut.String(), tc.want)
			}
		})
	}
}

// TestMode: the program name and the first argument choose between
// Kubermatic's command lines and this project's sub-commands.
func TestMode(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"/usr/local/bin/machine-controller"}, modeKKPController},
		{[]string{"/usr/local/bin/machine-controller", "-kubeconfig", "k"}, modeKKPController},
		{[]string{"machine-controller", "--kubeconfig", "k"}, modeKKPController},
		{[]string{"/usr/local/bin/webhook", "-listen-address", ":9876"}, modeKKPWebhook},
		{[]string{"webhook"}, modeKKPWebhook},
		{[]string{"machine-controller", "run", "--kubeconfig", "k"}, modeCommands},
		{[]string{"machine-controller", "webhook", "--port", "9443"}, modeCommands},
		{[]string{"machine-controller", "render", "-f", "md.yaml"}, modeCommands},
		{[]string{"machine-controller", "--help"}, modeCommands},
		{[]string{"machine-controller", "-h"}, modeCommands},
	} {
		if got := mode(tc.args); got != tc.want {
			t.Errorf("mode(%q) = %d, want %d", tc.args, got, tc.want)
		}
	}
}

// TestKKPHelp: -help prints the flags and exits 0.
func TestKKPHelp(t *testing.T) {
	for _, program := range []string{"machine-controller", "webhook"} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), []string{program, "-help"}, strings.NewReader(""), &out, &errOut, getenvOf(nil)); code != 0 {
			t.Errorf("%s -help: exit %d, %s", program, code, errOut.String())
		}
		if !strings.Contains(errOut.String(), "-ca-bundle") {
			t.Errorf("%s -help does not list -ca-bundle: %s", program, errOut.String())
		}
	}
}

func mustVersion(t *testing.T, v string) *semver.Version {
	t.Helper()
	version, err := semver.NewVersion(v)
	if err != nil {
		t.Fatal(err)
	}
	return version
}

// TestVersion: -version and --version print the version under each
// program name, in Kubermatic's mode as in this project's.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"machine-controller", "--version"}, {"/usr/local/bin/machine-controller", "-version"}, {"/usr/local/bin/webhook", "-version"}} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), &out, &errOut, getenvOf(nil))
		want := filepath.Base(args[0]) + " version "
		if code != 0 || !strings.HasPrefix(out.String(), want) || !strings.Contains(out.String(), "commit ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 0 and %q...", args, code, out.String(), errOut.String(), want)
		}
	}
}
