package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestRunOptionsInfraNodeLabels: --infra-node-labels-configmap takes
// NAMESPACE/NAME and refuses anything else with the flag named.
func TestRunOptionsInfraNodeLabels(t *testing.T) {
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
	for _, tc := range []struct {
		value string
		want  types.NamespacedName
		err   bool
	}{
		{value: "", want: types.NamespacedName{}},
		{value: "kube-system/node-labels", want: types.NamespacedName{Namespace: "kube-system", Name: "node-labels"}},
		{value: "node-labels", err: true},
		{value: "/node-labels", err: true},
		{value: "a/b/c", err: true},
	} {
		t.Run(tc.value, func(t *testing.T) {
			f := &runFlags{processFlags: processFlags{kubeconfig: kubeconfig}, infraNodeLabels: tc.value}
			opts, err := f.options(io.Discard)
			if tc.err {
				if err == nil || !strings.Contains(err.Error(), "--infra-node-labels-configmap") {
					t.Errorf("got %v, want an error naming the flag", err)
				}
				return
			}
			if err != nil || opts.InfraNodeLabels != tc.want {
				t.Errorf("got %v, %v; want %v", opts.InfraNodeLabels, err, tc.want)
			}
		})
	}
}
