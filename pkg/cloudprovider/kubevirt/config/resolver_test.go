package config

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func resolutionCases(t testing.TB) []validCase {
	t.Helper()
	kubeconfig := testKubeconfig(t)
	secretKubeconfig := `{cloudProviderSpec: {auth: {kubeconfig: {secretKeyRef: {namespace: kube-system, name: infra, key: kubeconfig}}}}}`
	return []validCase{
		{
			name: "CLUSTER_ID and PROJECT_ID override the spec",
			env:  map[string]string{"CLUSTER_ID": "xyz789", "PROJECT_ID": "proj-9"},
			want: func(s *Settings) { s.ClusterName, s.ProjectID = "xyz789", "proj-9" },
		},
		{
			name:  "kubeconfig from KUBEVIRT_KUBECONFIG, base64",
			patch: `{cloudProviderSpec: {auth: null}}`,
			env:   map[string]string{"KUBEVIRT_KUBECONFIG": b64(kubeconfig)},
		},
		{
			name:     "kubeconfig from a Secret, plain YAML",
			patch:    secretKubeconfig,
			resolver: &fakeResolver{secrets: map[string]string{"kube-system/infra/kubeconfig": string(kubeconfig)}},
		},
		{
			name:     "empty kubeconfig Secret falls back to KUBEVIRT_KUBECONFIG",
			patch:    secretKubeconfig,
			resolver: &fakeResolver{secrets: map[string]string{"kube-system/infra/kubeconfig": ""}},
			env:      map[string]string{"KUBEVIRT_KUBECONFIG": string(kubeconfig)},
		},
		{
			name: "kubeconfig from a ConfigMap, base64 with a newline",
			patch: `{cloudProviderSpec: {auth: {kubeconfig: {
				configMapKeyRef: {namespace: kube-system, name: infra, key: kubeconfig}}}}}`,
			resolver: &fakeResolver{configMaps: map[string]string{"kube-system/infra/kubeconfig": b64(kubeconfig) + "\n"}},
		},
		{
			name: "referenced values are trimmed",
			patch: `{cloudProviderSpec: {virtualMachine: {template: {
				cpus: {configMapKeyRef: {namespace: sizes, name: medium, key: cpus}},
				memory: {secretKeyRef: {namespace: sizes, name: medium, key: memory}, value: 1Gi}}}}}`,
			resolver: &fakeResolver{
				configMaps: map[string]string{"sizes/medium/cpus": "3\n"},
				secrets:    map[string]string{"sizes/medium/memory": " 6Gi\n"},
			},
			want: func(s *Settings) { s.CPUs, s.Memory = qty("3"), qty("6Gi") },
		},
		{
			name:     "multi-queue from a Secret",
			patch:    `{cloudProviderSpec: {virtualMachine: {enableNetworkMultiQueue: {secretKeyRef: {namespace: a, name: b, key: c}}}}}`,
			resolver: &fakeResolver{secrets: map[string]string{"a/b/c": "false"}},
			want:     func(s *Settings) { s.NetworkMultiQueue = false },
		},
	}
}

func TestResolveReferenceFailures(t *testing.T) {
	cpusFromSecret := `{cloudProviderSpec: {virtualMachine: {template: {cpus: {secretKeyRef: {namespace: sizes, name: medium, key: cpus}}}}}}`
	tests := []struct {
		name     string
		patch    string
		resolver Resolver
		// transient is the expected message of an ordinary error; invalid
		// the expected message of an *InvalidError.
		transient, invalid string
	}{
		{
			name:      "missing Secret key is transient",
			patch:     cpusFromSecret,
			resolver:  &fakeResolver{},
			transient: "failed to resolve the provider spec: failed to resolve " + pT + ".cpus: secret 'medium' in namespace 'sizes' has no key 'cpus'",
		},
		{
			name:      "transient failures take precedence over invalid values",
			patch:     `{cloudProviderSpec: {clusterName: "not valid", virtualMachine: {template: {cpus: {secretKeyRef: {namespace: sizes, name: medium, key: cpus}}}}}}`,
			resolver:  &fakeResolver{err: errors.New("connection refused")},
			transient: "failed to resolve the provider spec: failed to resolve " + pT + ".cpus: connection refused",
		},
		{
			name:      "references without a resolver are transient",
			patch:     cpusFromSecret,
			transient: "failed to resolve the provider spec: failed to resolve " + pT + ".cpus: references to Secrets and ConfigMaps need a resolver",
		},
		{
			name:     "invalid value from a Secret is not shown",
			patch:    cpusFromSecret,
			resolver: &fakeResolver{secrets: map[string]string{"sizes/medium/cpus": "two-and-a-half"}},
			invalid:  msg(pT + ".cpus: Invalid value: must be a Kubernetes quantity such as 2 or 500m"),
		},
		{
			name:     "ConfigVarBool from a Secret that is not a boolean",
			patch:    `{cloudProviderSpec: {virtualMachine: {enableNetworkMultiQueue: {secretKeyRef: {namespace: a, name: b, key: c}}}}}`,
			resolver: &fakeResolver{secrets: map[string]string{"a/b/c": "maybe"}},
			invalid:  msg(pVM + ".enableNetworkMultiQueue: Invalid value: the referenced value must be a boolean (true or false)"),
		},
		{
			name:     "invalid kubeconfig from a Secret",
			patch:    `{cloudProviderSpec: {auth: {kubeconfig: {secretKeyRef: {namespace: a, name: b, key: c}}}}}`,
			resolver: &fakeResolver{secrets: map[string]string{"a/b/c": "users: [{name: x, user: {token: " + testToken + "}}]"}},
			invalid:  msg(pC + ".auth.kubeconfig: Invalid value: the kubeconfig must set current-context"),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Load(t.Context(), patched(t, tc.patch), tc.resolver, env(nil))
			if err == nil {
				t.Fatal("expected an error")
			}
			want := tc.invalid
			if tc.transient != "" {
				want = tc.transient
			}
			if IsInvalid(err) != (tc.invalid != "") {
				t.Errorf("IsInvalid = %t, want %t for %v", IsInvalid(err), tc.invalid != "", err)
			}
			if diff := cmp.Diff(want, err.Error()); diff != "" {
				t.Errorf("unexpected message (-want +got):\n%s", diff)
			}
			if strings.Contains(err.Error(), testToken) || strings.Contains(err.Error(), "two-and-a-half") {
				t.Errorf("the message shows a value read from a Secret: %v", err)
			}
		})
	}
}

func TestResolveCancelledContext(t *testing.T) {
	spec, err := Parse(patched(t, ""))
	if err != nil {
		t.Fatalf("failed to parse: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = Resolve(ctx, spec, nil, env(nil))
	if !errors.Is(err, context.Canceled) || IsInvalid(err) {
		t.Errorf("expected a transient context.Canceled error, got %v", err)
	}
}

func TestResolveNilSpec(t *testing.T) {
	_, err := Resolve(t.Context(), nil, nil, env(nil))
	if diff := cmp.Diff(msg(pV+": Required value"), errString(err)); diff != "" {
		t.Errorf("unexpected error (-want +got):\n%s", diff)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
