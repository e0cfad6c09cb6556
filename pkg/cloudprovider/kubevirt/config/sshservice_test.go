package config

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// pSSH is the field path of virtualMachine.sshService.
const pSSH = pVM + ".sshService"

func sshServiceValidCases(testing.TB) []validCase {
	return []validCase{
		{
			name:  "SSH NodePort Service with default ports",
			patch: `{cloudProviderSpec: {virtualMachine: {sshService: {type: NodePort}}}}`,
			want: func(s *Settings) {
				s.SSHService = &SSHServiceSettings{Type: corev1.ServiceTypeNodePort, Port: 22, TargetPort: 22,
					ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster}
			},
		},
		{
			name: "SSH LoadBalancer Service with every field",
			patch: `{cloudProviderSpec: {virtualMachine: {sshService: {type: LoadBalancer, port: 2222, targetPort: 22, externalTrafficPolicy: Local,
				loadBalancerSourceRanges: [10.0.0.0/8, "2001:db8::/32"], annotations: {metallb.universe.tf/address-pool: ssh}}}}}`,
			want: func(s *Settings) {
				s.SSHService = &SSHServiceSettings{
					Type: corev1.ServiceTypeLoadBalancer, Port: 2222, TargetPort: 22,
					ExternalTrafficPolicy:    corev1.ServiceExternalTrafficPolicyLocal,
					LoadBalancerSourceRanges: []string{"10.0.0.0/8", "2001:db8::/32"},
					Annotations:              map[string]string{"metallb.universe.tf/address-pool": "ssh"},
				}
			},
		},
	}
}

func sshServiceCases(testing.TB) []invalidCase {
	return []invalidCase{
		{
			name:  "SSH Service without a type",
			patch: `{cloudProviderSpec: {virtualMachine: {sshService: {port: 22}}}}`,
			want:  msg(pSSH + `.type: Required value: one of "NodePort", "LoadBalancer"`),
		},
		{
			name:  "SSH Service of type ClusterIP",
			patch: `{cloudProviderSpec: {virtualMachine: {sshService: {type: ClusterIP}}}}`,
			want:  msg(pSSH + `.type: Unsupported value: "ClusterIP": supported values: "NodePort", "LoadBalancer"`),
		},
		{
			name:  "SSH Service ports out of range",
			patch: `{cloudProviderSpec: {virtualMachine: {sshService: {type: NodePort, port: 65536, targetPort: -1}}}}`,
			want: msg(pSSH+`.port: Invalid value: 65536: must be a TCP port between 1 and 65535`,
				pSSH+`.targetPort: Invalid value: -1: must be a TCP port between 1 and 65535`),
		},
		{
			name:  "SSH Service with an unknown traffic policy",
			patch: `{cloudProviderSpec: {virtualMachine: {sshService: {type: LoadBalancer, externalTrafficPolicy: local}}}}`,
			want:  msg(pSSH + `.externalTrafficPolicy: Unsupported value: "local": supported values: "Cluster", "Local"`),
		},
		{
			name:  "SSH Service port not a number",
			patch: `{cloudProviderSpec: {virtualMachine: {sshService: {type: NodePort, port: ssh}}}}`,
			want:  msg(pSSH + `.port: Invalid value: "ssh": must be an integer, not a string`),
		},
		{
			name: "SSH Service source ranges on a NodePort, one not canonical",
			patch: `{cloudProviderSpec: {virtualMachine: {sshService: {type: NodePort,
				loadBalancerSourceRanges: [10.0.0.1/8]}}}}`,
			want: msg(pSSH+`.loadBalancerSourceRanges: Forbidden: only a Service of type LoadBalancer takes source ranges`,
				pSSH+`.loadBalancerSourceRanges[0]: Invalid value: "10.0.0.1/8": must not have bits set beyond the prefix length`),
		},
		{
			name:  "SSH Service annotation key not a qualified name",
			patch: `{cloudProviderSpec: {virtualMachine: {sshService: {type: LoadBalancer, annotations: {"bad key": x}}}}}`,
			want: msg(pSSH + `.annotations[bad key]: Invalid value: "bad key": name part must consist of alphanumeric characters, ` +
				`'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or ` +
				`'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`),
		},
		{
			name:  "SSH Service unknown field",
			patch: `{cloudProviderSpec: {virtualMachine: {sshService: {type: NodePort, nodePort: 30022}}}}`,
			want: msg(pSSH + `: Invalid value: "nodePort": unknown field (known fields: annotations, ` +
				`externalTrafficPolicy, loadBalancerSourceRanges, port, targetPort, type)`),
		},
	}
}
