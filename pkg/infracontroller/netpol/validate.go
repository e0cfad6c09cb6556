package netpol

import (
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The rules below are the API server's for a new NetworkPolicy
// (ValidateNetworkPolicySpec in k8s.io/kubernetes/pkg/apis/networking/validation),
// with the strict CIDR rules Kubernetes 1.36 enforces by default
// (StrictIPCIDRValidation): a policy they accept is accepted by any API
// server, so the controller never writes one that is refused and retried
// for ever.

var (
	protocols   = []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP}
	policyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}
	// selectorOptions refuses invalid label values, as for a new policy.
	selectorOptions = metav1validation.LabelSelectorValidationOptions{}
)

// validateSpec returns what the API server would refuse in spec, each
// error naming its field under "spec" and what is allowed.
func validateSpec(spec *networkingv1.NetworkPolicySpec) field.ErrorList {
	path := field.NewPath("spec")
	errs := metav1validation.ValidateLabelSelector(&spec.PodSelector, selectorOptions, path.Child("podSelector"))
	for i, rule := range spec.Ingress {
		rulePath := path.Child("ingress").Index(i)
		errs = append(errs, validatePorts(rule.Ports, rulePath.Child("ports"))...)
		errs = append(errs, validatePeers(rule.From, rulePath.Child("from"))...)
	}
	for i, rule := range spec.Egress {
		rulePath := path.Child("egress").Index(i)
		errs = append(errs, validatePorts(rule.Ports, rulePath.Child("ports"))...)
		errs = append(errs, validatePeers(rule.To, rulePath.Child("to"))...)
	}
	typesPath := path.Child("policyTypes")
	if len(spec.PolicyTypes) > len(policyTypes) {
		return append(errs, field.Invalid(typesPath, spec.PolicyTypes, "may not specify more than two policyTypes"))
	}
	for i, t := range spec.PolicyTypes {
		if t != networkingv1.PolicyTypeIngress && t != networkingv1.PolicyTypeEgress {
			errs = append(errs, field.NotSupported(typesPath.Index(i), t, policyTypes))
		}
	}
	return errs
}

// validatePorts checks protocols (TCP, UDP, SCTP), port numbers
// (1-65535) or names (IANA_SVC_NAME), and endPort (numeric, at least port).
func validatePorts(ports []networkingv1.NetworkPolicyPort, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, p := range ports {
		portPath := path.Index(i)
		if p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP && *p.Protocol != corev1.ProtocolUDP && *p.Protocol != corev1.ProtocolSCTP {
			errs = append(errs, field.NotSupported(portPath.Child("protocol"), *p.Protocol, protocols))
		}
		endPath := portPath.Child("endPort")
		switch {
		case p.Port == nil && p.EndPort != nil:
			errs = append(errs, field.Invalid(endPath, *p.EndPort, "may not be specified when `port` is not specified"))
		case p.Port == nil:
		case p.Port.Type == intstr.Int:
			errs = append(errs, invalid(portPath.Child("port"), p.Port.IntVal, validation.IsValidPortNum(int(p.Port.IntVal)))...)
			if p.EndPort != nil {
				if *p.EndPort < p.Port.IntVal {
					errs = append(errs, field.Invalid(endPath, *p.EndPort, "must be greater than or equal to `port`"))
				}
				errs = append(errs, invalid(endPath, *p.EndPort, validation.IsValidPortNum(int(*p.EndPort)))...)
			}
		default:
			if p.EndPort != nil {
				errs = append(errs, field.Invalid(endPath, *p.EndPort, "may not be specified when `port` is non-numeric"))
			}
			errs = append(errs, invalid(portPath.Child("port"), p.Port.StrVal, validation.IsValidPortName(p.Port.StrVal))...)
		}
	}
	return errs
}

// validatePeers checks that every peer names pods, namespaces or an
// ipBlock (never an ipBlock with another), with valid selectors and CIDRs.
func validatePeers(peers []networkingv1.NetworkPolicyPeer, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, peer := range peers {
		peerPath := path.Index(i)
		n := 0
		if peer.PodSelector != nil {
			n++
			errs = append(errs, metav1validation.ValidateLabelSelector(peer.PodSelector, selectorOptions, peerPath.Child("podSelector"))...)
		}
		if peer.NamespaceSelector != nil {
			n++
			errs = append(errs, metav1validation.ValidateLabelSelector(peer.NamespaceSelector, selectorOptions, peerPath.Child("namespaceSelector"))...)
		}
		if peer.IPBlock != nil {
			n++
			errs = append(errs, validateIPBlock(peer.IPBlock, peerPath.Child("ipBlock"))...)
		}
		switch {
		case n == 0:
			errs = append(errs, field.Required(peerPath, "must specify a peer: podSelector, namespaceSelector or ipBlock"))
		case n > 1 && peer.IPBlock != nil:
			errs = append(errs, field.Forbidden(peerPath, "may not specify both ipBlock and another peer"))
		}
	}
	return errs
}

// validateIPBlock checks cidr and every except entry, each a CIDR in
// canonical subnet form, and that every except is a strict subset of cidr.
func validateIPBlock(block *networkingv1.IPBlock, path *field.Path) field.ErrorList {
	cidrPath := path.Child("cidr")
	if block.CIDR == "" {
		return field.ErrorList{field.Required(cidrPath, "a CIDR such as 10.0.0.0/8 or fd00::/8")}
	}
	// A value valid under the strict rules parses as a netip.Prefix.
	errs := validation.IsValidCIDRForLegacyField(cidrPath, block.CIDR, true, nil)
	cidr, cidrErr := netip.ParsePrefix(block.CIDR)
	for i, except := range block.Except {
		exceptPath := path.Child("except").Index(i)
		exceptErrs := validation.IsValidCIDRForLegacyField(exceptPath, except, true, nil)
		errs = append(errs, exceptErrs...)
		p, err := netip.ParsePrefix(except)
		if len(exceptErrs) > 0 || err != nil || cidrErr != nil {
			continue
		}
		// Contains is false across address families.
		if !cidr.Contains(p.Addr()) || cidr.Bits() >= p.Bits() {
			errs = append(errs, field.Invalid(exceptPath, except, "must be a strict subset of `cidr` ("+block.CIDR+")"))
		}
	}
	return errs
}

// invalid turns the messages of a validation function into errors of one
// field.
func invalid(path *field.Path, value any, msgs []string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(path, value, msg))
	}
	return errs
}

// describe joins the errors of one policy into a message.
func describe(errs field.ErrorList) string {
	msgs := make([]string, 0, len(errs))
	for _, err := range errs {
		msgs = append(msgs, err.Error())
	}
	return strings.Join(msgs, "; ")
}
