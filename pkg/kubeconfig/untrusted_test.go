package kubeconfig

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	certutil "k8s.io/client-go/util/cert"
)

// TestUntrustedRefusals: every field through which a kubeconfig would run
// a program or read a file of the process, and credentials in a server
// URL, are refused with the field named and nothing of the value quoted.
func TestUntrustedRefusals(t *testing.T) {
	const (
		user    = "  user: {token: " + secret + "}\n"
		cluster = `  cluster: {server: "https://infra.example:6443"}` + "\n"
	)
	// marker is a value (a path or a command) no message may contain.
	const marker = "/tmp/marker-value-" + secret
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"exec plugin", user, "  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: [-c, 'touch " + marker + "'], interactiveMode: Never}\n",
			`users["admin"].user.exec: exec plugins are not run`},
		{"auth provider", user, "  user:\n    auth-provider: {name: oidc, config: {idp-issuer-url: 'https://" + marker + "'}}\n",
			`users["admin"].user.auth-provider: auth provider plugins are not run`},
		{"token file", user, "  user: {tokenFile: " + marker + "}\n",
			`users["admin"].user.tokenFile: files are not read`},
		{"service account token file", user, "  user: {tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token}\n",
			`users["admin"].user.tokenFile: files are not read`},
		{"client certificate file", user, "  user: {client-certificate: " + marker + ", client-key-data: eA==}\n",
			`users["admin"].user.client-certificate: files are not read`},
		{"client key file", user, "  user: {client-certificate-data: eA==, client-key: " + marker + "}\n",
			`users["admin"].user.client-key: files are not read`},
		{"CA file", cluster, `  cluster: {server: "https://infra.example:6443", certificate-authority: ` + marker + "}\n",
			`clusters["infra"].cluster.certificate-authority: files are not read`},
		{"password in the server URL", cluster, `  cluster: {server: "https://admin:` + secret + `@infra.example:6443"}` + "\n",
			`clusters["infra"].cluster.server: must not contain credentials`},
		{"user in the server URL", cluster, `  cluster: {server: "https://` + secret + `@infra.example:6443"}` + "\n",
			`clusters["infra"].cluster.server: must not contain credentials`},
		{"server not HTTP", cluster, `  cluster: {server: "file://` + marker + `"}` + "\n",
			`clusters["infra"].cluster.server: the scheme must be https or http`},
		{"SOCKS proxy", cluster, `  cluster: {server: "https://infra.example:6443", proxy-url: "socks5://` + secret + `@proxy:1080"}` + "\n",
			`clusters["infra"].cluster.proxy-url: the scheme must be https or http`},
		{"unused user with an exec plugin", "users:\n", "users:\n- name: other\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1, command: " + marker + "}\n",
			`users["other"].user.exec: exec plugins are not run`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(valid, tc.from) {
				t.Fatalf("the test kubeconfig has no %q", tc.from)
			}
			data := []byte(strings.Replace(valid, tc.from, tc.to, 1))
			problem := Problem(data)
			if !strings.Contains(problem, tc.want) {
				t.Errorf("Problem = %q, want it to contain %q", problem, tc.want)
			}
			_, _, err := Parse(data)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse error = %v, want ErrInvalid saying %q", err, tc.want)
			}
			for _, value := range []string{secret, marker, "/var/run/secrets"} {
				if err != nil && strings.Contains(err.Error(), value) {
					t.Errorf("the error quotes the kubeconfig: %v", err)
				}
			}
		})
	}
}

// TestUntrustedAccepts: inline credentials, an HTTP proxy with credentials
// and insecure TLS stay usable.
func TestUntrustedAccepts(t *testing.T) {
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("admin", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	testCertB64, testKeyB64 := base64.StdEncoding.EncodeToString(certPEM), base64.StdEncoding.EncodeToString(keyPEM)
	for name, data := range map[string]string{
		"client certificate data": strings.Replace(valid, "user: {token: "+secret+"}", "user: {client-certificate-data: "+testCertB64+", client-key-data: "+testKeyB64+"}", 1),
		"HTTP proxy":              strings.Replace(valid, `server: "https://infra.example:6443"`, `server: "https://infra.example:6443", proxy-url: "http://u:p@proxy.example:3128"`, 1),
		"basic auth":              strings.Replace(valid, "user: {token: "+secret+"}", "user: {username: admin, password: "+secret+"}", 1),
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := Parse([]byte(data)); err != nil {
				t.Errorf("Parse = %v", err)
			}
		})
	}
}

// TestTooLarge: a kubeconfig beyond MaxSize is refused before it is parsed.
func TestTooLarge(t *testing.T) {
	data := []byte(valid + "# " + strings.Repeat("x", MaxSize) + "\n")
	if p := Problem(data); !strings.Contains(p, "too large") {
		t.Errorf("Problem = %q, want too large", p)
	}
}

// TestOperatorFile: a kubeconfig file the operator named may use an exec
// plugin and files, with relative paths resolved against its directory;
// the same content is still refused before it is read as an operator file.
func TestOperatorFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "kubeconfig")
	// The directory in a comment makes the content unique to this run:
	// operator files are remembered by their content.
	content := strings.Replace(valid, "user: {token: "+secret+"}", "user: {tokenFile: token}", 1) + "# " + dir + "\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if p := Problem([]byte(content)); !strings.Contains(p, "tokenFile") {
		t.Fatalf("before ReadOperatorFile: Problem = %q, want the tokenFile refused", p)
	}
	data, err := ReadOperatorFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, namespace, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BearerTokenFile != filepath.Join(dir, "token") || namespace != "cluster-abc" {
		t.Errorf("Parse = token file %q, namespace %q; want the file beside the kubeconfig", cfg.BearerTokenFile, namespace)
	}
	exec := strings.Replace(valid, "user: {token: "+secret+"}", "user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: ./get-token, interactiveMode: Never}}", 1) + "# " + dir + "\n"
	if err := os.WriteFile(path, []byte(exec), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err = ReadOperatorFile(path); err != nil {
		t.Fatal(err)
	}
	if cfg, _, err = Parse(data); err != nil {
		t.Fatal(err)
	}
	if cfg.ExecProvider == nil || cfg.ExecProvider.Command != filepath.Join(dir, "get-token") {
		t.Errorf("exec provider = %+v, want ./get-token resolved against the file's directory", cfg.ExecProvider)
	}
	if _, err := ReadOperatorFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("ReadOperatorFile of a missing file succeeded")
	}
}

func TestServer(t *testing.T) {
	for in, want := range map[string]string{
		"https://infra.example:6443":                                 "https://infra.example:6443",
		"https://admin:" + secret + "@infra.example:6443/base":       "https://infra.example:6443/base",
		"https://infra.example:6443/?token=" + secret + "#" + secret: "https://infra.example:6443/",
		"https://infra\x7f.example":                                  "(a server URL that does not parse)",
	} {
		if got := Server(in); got != want {
			t.Errorf("Server(%q) = %q, want %q", in, got, want)
		}
	}
}
