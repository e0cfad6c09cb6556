package config

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// sshServiceTypes are the Service types that reach a VM from outside the
// infra cluster; ClusterIP would add nothing to the VMI's pod IP.
var sshServiceTypes = []corev1.ServiceType{corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer}

// trafficPolicies are the external traffic policies of a Service.
var trafficPolicies = []corev1.ServiceExternalTrafficPolicy{corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal}

// DefaultSSHPort is the Service port and guest port of an SSH Service
// unless the spec names others.
const DefaultSSHPort int32 = 22

// sshService resolves virtualMachine.sshService: a Service type the VM can
// be reached through, ports in 1..65535, an external traffic policy, canonical CIDRs for a
// LoadBalancer's source ranges and annotation keys as the API server
// checks them.
func (rs *resolution) sshService(s *Settings, p *field.Path, svc *SSHService) {
	if svc == nil {
		return
	}
	out := &SSHServiceSettings{
		Type:       corev1.ServiceType(svc.Type),
		Port:       rs.port(p.Child("port"), svc.Port),
		TargetPort: rs.port(p.Child("targetPort"), svc.TargetPort),
	}
	if svc.Type == "" {
		rs.add(field.Required(p.Child("type"), "one of "+quoteList(sshServiceTypes)))
	} else {
		enum(rs, p.Child("type"), out.Type, sshServiceTypes)
	}
	out.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	if svc.ExternalTrafficPolicy != "" {
		policy := corev1.ServiceExternalTrafficPolicy(svc.ExternalTrafficPolicy)
		if enum(rs, p.Child("externalTrafficPolicy"), policy, trafficPolicies) {
			out.ExternalTrafficPolicy = policy
		}
	}
	rangesPath := p.Child("loadBalancerSourceRanges")
	if len(svc.LoadBalancerSourceRanges) > 0 && out.Type != corev1.ServiceTypeLoadBalancer {
		rs.add(field.Forbidden(rangesPath, "only a Service of type LoadBalancer takes source ranges"))
	}
	for i, cidr := range svc.LoadBalancerSourceRanges {
		rs.add(validation.IsValidCIDR(rangesPath.Index(i), cidr)...)
	}
	out.LoadBalancerSourceRanges = slices.Clone(svc.LoadBalancerSourceRanges)
	annotationsPath := p.Child("annotations")
	for _, key := range slices.Sorted(maps.Keys(svc.Annotations)) {
		// The API server checks annotation keys as qualified names,
		// ignoring case.
		if msgs := validationMessages(labelKeyCheck, strings.ToLower(key)); msgs != "" {
			rs.add(field.Invalid(annotationsPath.Key(key), key, msgs))
		}
	}
	if len(svc.Annotations) > 0 {
		out.Annotations = maps.Clone(svc.Annotations)
	}
	s.SSHService = out
}

// port returns a TCP port, DefaultSSHPort when v is 0.
func (rs *resolution) port(p *field.Path, v int32) int32 {
	if v == 0 {
		return DefaultSSHPort
	}
	if len(validation.IsValidPortNum(int(v))) > 0 {
		rs.add(field.Invalid(p, v, "must be a TCP port between 1 and 65535"))
	}
	return v
}
