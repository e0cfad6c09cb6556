package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

	files := &webhookFlags{processFlags: processFlags{kubeconfig: kubeconfig}, certFile: "/certs/tls.crt", keyFile: "/certs/tls.key"}
	opts, err := files.options(io.Discard)
	if err != nil || opts.SelfManaged != nil || opts.CertFile != "/certs/tls.crt" {
		t.Errorf("file mode: %+v, %v", opts, err)
	}

	self := &webhookFlags{processFlags: processFlags{kubeconfig: kubeconfig}, namespace: "mc", secretName: "tls", serviceName: "svc", mutatingConfig: "m", validatingConfig: "v"}
	opts, err = self.options(io.Discard)
	if err != nil || opts.SelfManaged == nil || opts.SelfManaged.Namespace != "mc" || opts.SelfManaged.SecretName != "tls" ||
		opts.SelfManaged.ServiceName != "svc" || opts.SelfManaged.MutatingWebhookConfiguration != "m" || opts.SelfManaged.ValidatingWebhookConfiguration != "v" {
		t.Errorf("self-managed mode: %+v, %v", opts.SelfManaged, err)
	}

	half := &webhookFlags{processFlags: processFlags{kubeconfig: kubeconfig}, certFile: "/certs/tls.crt"}
	opts, err = half.options(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := opts.Run(t.Context()); err == nil || !strings.Contains(err.Error(), "certificate and a key file") {
		t.Errorf("Run with a certificate and no key = %v, want refused", err)
	}
}
