package infra

import "testing"

func TestResolveNamespace(t *testing.T) {
	tests := []struct {
		name                     string
		spec, option, kubeconfig string
		want                     string
	}{
		{name: "spec wins", spec: "a", option: "b", kubeconfig: "c", want: "a"},
		{name: "provider option next", option: "b", kubeconfig: "c", want: "b"},
		{name: "kubeconfig context next", kubeconfig: "c", want: "c"},
		{name: "default last", want: "default"},
		{name: "spec alone", spec: "a", want: "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ResolveNamespace(tt.spec, tt.option, tt.kubeconfig); got != tt.want {
				t.Errorf("ResolveNamespace(%q, %q, %q) = %q, want %q", tt.spec, tt.option, tt.kubeconfig, got, tt.want)
			}
		})
	}
}
