package kubeconfig

import (
	"errors"
	"strings"
	"testing"
)

// secret is a credential every test kubeconfig carries; no message may
// contain it.
const secret = "s3cr3t-token-value"

const valid = `apiVersion: v1
kind: Config
current-context: infra
contexts:
- name: infra
  context: {cluster: infra, user: admin, namespace: cluster-abc}
clusters:
- name: infra
  cluster: {server: "https://infra.example:6443"}
users:
- name: admin
  user: {token: ` + secret + `}
`

func TestParse(t *testing.T) {
	cfg, namespace, err := Parse([]byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://infra.example:6443" || cfg.BearerToken != secret || namespace != "cluster-abc" {
		t.Errorf("Parse = host %q, namespace %q", cfg.Host, namespace)
	}
	if p := Problem([]byte(valid)); p != "" {
		t.Errorf("Problem of a valid kubeconfig = %q", p)
	}
}

func TestProblems(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"not YAML", "x: [" + secret, "could not be parsed"},
		{"no current context", strings.Replace(valid, "current-context: infra", "", 1), "must set current-context"},
		{"unknown current context", strings.Replace(valid, "current-context: infra", "current-context: other", 1), "not among its contexts"},
		{"no server", strings.Replace(valid, `server: "https://infra.example:6443"`, `server: ""`, 1), "must be defined and have a server"},
		{"two ways to log in", strings.Replace(valid, "token: "+secret, "token: "+secret+", username: admin, password: "+secret, 1), "usable client configuration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problem := Problem([]byte(tc.data))
			if !strings.Contains(problem, tc.want) {
				t.Errorf("Problem = %q, want it to contain %q", problem, tc.want)
			}
			_, _, err := Parse([]byte(tc.data))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse error = %v, want ErrInvalid saying %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error quotes the kubeconfig: %v", err)
			}
		})
	}
}

// TestProblemRemembersVerdicts: each content keeps its own verdict, and a
// kubeconfig checked before is not parsed again (a parse allocates hundreds
// of times).
func TestProblemRemembersVerdicts(t *testing.T) {
	noServer := []byte(strings.Replace(valid, `server: "https://infra.example:6443"`, `server: ""`, 1))
	for range 2 {
		if p := Problem([]byte(valid)); p != "" {
			t.Errorf("Problem of a valid kubeconfig = %q", p)
		}
		if p := Problem(noServer); !strings.Contains(p, "have a server") {
			t.Errorf("Problem of a kubeconfig without server = %q", p)
		}
	}
	data := []byte(valid)
	if allocs := testing.AllocsPerRun(100, func() { Problem(data) }); allocs > 2 {
		t.Errorf("Problem of a kubeconfig checked before allocates %.0f times, want at most 2 (no parse)", allocs)
	}
}

// FuzzParse: no input panics, every refusal is ErrInvalid, no message
// repeats the input and nothing accepted runs a program or reads a file.
func FuzzParse(f *testing.F) {
	f.Add([]byte(valid))
	f.Add([]byte("x: ["))
	f.Add([]byte(`{"apiVersion":"v1","kind":"Config","current-context":"a","contexts":[{"name":"a","context":{"cluster":"c"}}],"clusters":[{"name":"c","cluster":{"server":"h"}}]}`))
	f.Add([]byte(strings.Replace(valid, "user: {token: "+secret+"}", "user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh}}", 1)))
	f.Add([]byte(strings.Replace(valid, "user: {token: "+secret+"}", "user: {tokenFile: /etc/passwd}", 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, _, err := Parse(data)
		if err == nil {
			if fromFiles(cfg) {
				t.Fatalf("a kubeconfig from a user gave a configuration that runs a program or reads a file: %+v", cfg)
			}
			return
		}
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("error %v is not ErrInvalid", err)
		}
		if len(data) >= 12 && strings.Contains(err.Error(), string(data)) {
			t.Fatalf("the error quotes the input: %v", err)
		}
	})
}
