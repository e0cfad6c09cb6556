// Package trap builds the kubeconfigs with which a user would try to make
// our processes run a program or send one of their files, and checks that
// nothing of the kind happened: a program would create a marker file, and
// a capture server, the only server the kubeconfigs name, counts every
// request it gets.
package trap

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// Token is the content of the process's file that a tokenFile kubeconfig
// points at; no request, message or log may carry it.
const Token = "trap-process-token-d41d8cd98f00"

// Trap is one set of attacks and their evidence.
type Trap struct {
	// Marker is the file the exec payload would create.
	Marker string
	// TokenFile is the process's file the tokenFile payload would send.
	TokenFile string
	// Server is the URL of the capture server.
	Server string

	requests atomic.Int64
	// leaked is set when a request carried Token.
	leaked atomic.Bool
}

// New starts the capture server (stopped with the test) and writes the
// token file.
func New(t testing.TB) *Trap {
	t.Helper()
	dir := t.TempDir()
	tr := &Trap{Marker: filepath.Join(dir, "marker"), TokenFile: filepath.Join(dir, "token")}
	if err := os.WriteFile(tr.TokenFile, []byte(Token), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr.requests.Add(1)
		if strings.Contains(r.Header.Get("Authorization"), Token) {
			tr.leaked.Store(true)
		}
		http.Error(w, "captured", http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	tr.Server = srv.URL
	return tr
}

// Payload is one attack: a name and its kubeconfig.
type Payload struct {
	Name       string
	Kubeconfig []byte
	// Field is the kubeconfig field a refusal must name.
	Field string
}

// Payloads returns the kubeconfigs of the attacks: an exec plugin that
// creates the marker (and prints a token), and a tokenFile that names the
// process's token file.
func (tr *Trap) Payloads() []Payload {
	exec := fmt.Sprintf(`exec:
      apiVersion: client.authentication.k8s.io/v1
      interactiveMode: Never
      command: /bin/sh
      args: ["-c", "touch %s; echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"stolen\"}}'"]`, tr.Marker)
	return []Payload{
		{Name: "exec", Kubeconfig: tr.kubeconfig(exec), Field: `users["attacker"].user.exec`},
		{Name: "tokenFile", Kubeconfig: tr.kubeconfig("tokenFile: " + tr.TokenFile), Field: `users["attacker"].user.tokenFile`},
	}
}

// Base64 returns data base64-encoded, as a providerSpec holds a kubeconfig.
func Base64(data []byte) string { return base64.StdEncoding.EncodeToString(data) }

func (tr *Trap) kubeconfig(user string) []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
current-context: attack
contexts:
- name: attack
  context: {cluster: capture, user: attacker, namespace: cluster-attack}
clusters:
- name: capture
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: attacker
  user:
    %s
`, tr.Server, user)
}

// Check fails the test if a payload ran a program or reached the capture
// server.
func (tr *Trap) Check(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(tr.Marker); err == nil {
		t.Errorf("the exec payload ran: %s exists", tr.Marker)
	}
	if n := tr.requests.Load(); n > 0 {
		t.Errorf("the capture server got %d requests (the token file sent: %v)", n, tr.leaked.Load())
	}
}
