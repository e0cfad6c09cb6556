package controller

import (
	"encoding/base64"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"
)

func TestDecodeKubeconfig(t *testing.T) {
	yaml := "apiVersion: v1\nkind: Config\n"
	for _, tc := range []struct {
		name    string
		value   string
		want    string
		wantErr bool
	}{
		{name: "empty", value: "  "},
		{name: "yaml", value: yaml, want: "apiVersion: v1\nkind: Config"},
		{name: "json", value: `{"kind":"Config"}`, want: `{"kind":"Config"}`},
		{name: "base64", value: base64.StdEncoding.EncodeToString([]byte(yaml)) + "\n", want: yaml},
		{name: "garbage", value: "not a kubeconfig!", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeKubeconfig(tc.value)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestInfraKubeconfig(t *testing.T) {
	data := []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://infra.example:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: tenant}}]
current-context: x
`)
	cfg, ns, err := kubeconfig.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"https://infra.example:6443", "tenant"}, []string{cfg.Host, ns}); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, _, err := kubeconfig.Parse([]byte("kind: [")); err == nil {
		t.Error("a broken kubeconfig parsed")
	}
}

func TestRunNeedsConfiguration(t *testing.T) {
	if err := (RunOptions{}).Run(t.Context()); err == nil {
		t.Error("Run without configuration succeeded")
	}
}
