package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/webhook"
)

// TestWebhookOptions: certificate files select the file mode; without them
// the certificate is self-managed with the flags' names; one file alone is
// refused before anything starts.
func TestWebhookOptions(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "user.kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
users: [{name: u, user: {token: t}}]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	root := newRootCmd(strings.NewReader(""), io.Discard, io.Discard)
	cmd, _, err := root.Find([]string{"webhook"})
	if err != nil || cmd.Name() != "webhook" {
		t.Fatalf("webhook sub-command not registered: %v", err)
	}

	files := &webhookFlags{maxInFlight: webhook.DefaultMaxInFlight, processFlags: processFlags{kubeconfig: kubeconfig}, certFile: "/certs/tls.crt", keyFile: "/certs/tls.key"}
	opts, err := files.options(io.Discard)
	if err != nil || opts.SelfManaged != nil || opts.CertFile != "/certs/tls.crt" {
		t.Errorf("file mode: %+v, %v", opts, err)
	}

	self := &webhookFlags{maxInFlight: webhook.DefaultMaxInFlight, processFlags: processFlags{kubeconfig: kubeconfig}, namespace: "mc", secretName: "tls", serviceName: "svc", mutatingConfig: "m", validatingConfig: "v"}
	opts, err = self.options(io.Discard)
	if err != nil || opts.SelfManaged == nil || opts.SelfManaged.Namespace != "mc" || opts.SelfManaged.SecretName != "tls" ||
		opts.SelfManaged.ServiceName != "svc" || opts.SelfManaged.MutatingWebhookConfiguration != "m" || opts.SelfManaged.ValidatingWebhookConfiguration != "v" {
		t.Errorf("self-managed mode: %+v, %v", opts.SelfManaged, err)
	}

	half := &webhookFlags{maxInFlight: webhook.DefaultMaxInFlight, processFlags: processFlags{kubeconfig: kubeconfig}, certFile: "/certs/tls.crt"}
	opts, err = half.options(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := opts.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "certificate and a key file") {
		t.Errorf("Run with a certificate and no key = %v, want refused", err)
	}
}

// TestWebhookMaxInFlightRange: --max-in-flight outside 1 to 1024 is
// refused before anything is read, naming the flag and the range; the
// default is in range.
func TestWebhookMaxInFlightRange(t *testing.T) {
	for _, n := range []int{0, -1, webhook.MaxMaxInFlight + 1} {
		f := &webhookFlags{maxInFlight: n, processFlags: processFlags{kubeconfig: "/nonexistent"}}
		_, err := f.options(io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--max-in-flight") || !strings.Contains(err.Error(), "must be between 1 and 1024") {
			t.Errorf("--max-in-flight %d: %v, want refused with the range", n, err)
		}
	}
	root := newRootCmd(strings.NewReader(""), io.Discard, io.Discard)
	cmd, _, err := root.Find([]string{"webhook"})
	if err != nil {
		t.Fatal(err)
	}
	if got := cmd.Flags().Lookup("max-in-flight").DefValue; got != "8" {
		t.Errorf("--max-in-flight default %s, want 8", got)
	}
}
