package netpol

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// ConfigMapName is the ConfigMap in a tenant namespace that lists custom
// policies: every key is a policy name, every value a NetworkPolicySpec in
// YAML or JSON.
const ConfigMapName = "network-policies"

// Label marks our NetworkPolicies, next to tenant.ManagedByLabel; its value
// is LabelDefault or LabelCustom.
const Label = "kkp-kubevirt.io/network-policy"

const (
	// LabelDefault marks the default policies.
	LabelDefault = "default"
	// LabelCustom marks the policies made from ConfigMapName.
	LabelCustom = "custom"
)

const (
	// IsolationPolicyName is the default policy isolating the namespace.
	IsolationPolicyName = "cluster-isolation"
	// ImporterPolicyName is the default policy letting CDI importers
	// reach in-cluster image servers (pods labelled app=image-repo).
	ImporterPolicyName = "allow-kubevirt-importer"
	// CSIControllerPolicyName is the default policy letting the tenant's
	// CSI controller and cloud controller manager pods reach the infra
	// and tenant API servers.
	CSIControllerPolicyName = "allow-kubevirt-csi-controller"
)

// DefaultPrivateCIDRs are the ranges the Internet egress rule excludes:
// the private and unique-local ranges that pod, service and node addresses
// come from.
var DefaultPrivateCIDRs = []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7", "fe80::/10"}

// Options configures the policies.
type Options struct {
	// DisableDefaults switches the default policies off; the ones made
	// earlier are deleted. Custom policies stay.
	DisableDefaults bool
	// PrivateCIDRs are excluded from the Internet egress rule;
	// DefaultPrivateCIDRs when nil. They must cover the pod addresses of
	// other tenant namespaces.
	PrivateCIDRs []string
	// AllowedCIDRs are further egress destinations, for example the
	// tenant API servers' address when it is a private one.
	AllowedCIDRs []string
	// Nameservers are DNS server addresses allowed on port 53, besides
	// the cluster DNS (pods k8s-app=kube-dns in kube-system).
	Nameservers []string
	// ClusterPoliciesNamespace, when set, names a namespace (not a tenant
	// one) whose ConfigMap ConfigMapName lists custom policies for every
	// tenant namespace, like Kubermatic's datacenter
	// customNetworkPolicies. A tenant's own policy of the same name wins.
	ClusterPoliciesNamespace string
	// APIServerCIDRs are the destinations the CSI controller and cloud
	// controller manager pods may reach over TCP: the infra and tenant API
	// servers they talk to; every address when empty.
	APIServerCIDRs []string
}

// Validate checks the addresses of o.
func (o Options) Validate() error {
	var bad []string
	for _, cidr := range slices.Concat(o.PrivateCIDRs, o.AllowedCIDRs, o.APIServerCIDRs) {
		if _, _, err := net.ParseCIDR(cidr); err != nil {
			bad = append(bad, cidr)
		}
	}
	for _, ip := range o.Nameservers {
		if net.ParseIP(ip) == nil {
			bad = append(bad, ip)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("invalid network policy addresses: %s", strings.Join(bad, ", "))
	}
	return nil
}

// Defaults returns the default policies of a namespace, or none when they
// are switched off.
func (o Options) Defaults(namespace string) []networkingv1.NetworkPolicy {
	if o.DisableDefaults {
		return nil
	}
	return []networkingv1.NetworkPolicy{
		policy(namespace, IsolationPolicyName, LabelDefault, o.isolation()),
		policy(namespace, ImporterPolicyName, LabelDefault, importer()),
		policy(namespace, CSIControllerPolicyName, LabelDefault, o.csiController()),
	}
}

func (o Options) isolation() networkingv1.NetworkPolicySpec {
	sameNamespace := []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}
	dns := []networkingv1.NetworkPolicyPort{port(corev1.ProtocolUDP, 53), port(corev1.ProtocolTCP, 53)}
	egress := []networkingv1.NetworkPolicyEgressRule{
		{To: sameNamespace},
		{To: []networkingv1.NetworkPolicyPeer{{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "kube-system"}},
			PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
		}}, Ports: dns},
	}
	if len(o.Nameservers) > 0 {
		var peers []networkingv1.NetworkPolicyPeer
		for _, ip := range o.Nameservers {
			peers = append(peers, ipBlock(hostCIDR(ip)))
		}
		egress = append(egress, networkingv1.NetworkPolicyEgressRule{To: peers, Ports: dns})
	}
	private := o.PrivateCIDRs
	if private == nil {
		private = DefaultPrivateCIDRs
	}
	internet := []networkingv1.NetworkPolicyPeer{
		ipBlock("0.0.0.0/0", family(private, false)...),
		ipBlock("::/0", family(private, true)...),
	}
	for _, cidr := range o.AllowedCIDRs {
		internet = append(internet, ipBlock(cidr))
	}
	egress = append(egress, networkingv1.NetworkPolicyEgressRule{To: internet})
	return networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: sameNamespace}},
		Egress:      egress,
	}
}

func importer() networkingv1.NetworkPolicySpec {
	return networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "containerized-data-importer", "cdi.kubevirt.io": "importer"}},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
		Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{
			NamespaceSelector: &metav1.LabelSelector{},
			PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "image-repo"}},
		}}}},
	}
}

// csiController lets the CSI controller and cloud controller manager pods
// open TCP connections to APIServerCIDRs (every address by default): they talk to the infra
// API server, which is a private address seen from a pod and so excluded
// by the isolation policy, and to the tenant cluster's API server,
// wherever its kubeconfig points. Policies add up, so their ingress stays
// isolated and their DNS stays allowed by the isolation policy.
//
// The pods are picked by the labels of their template, which the
// infra-controller owns and takes back when edited. VM pods carry
// labels a tenant chooses (the Machine's), so pods with the label keys
// KubeVirt's virt-launcher and CDI's worker pods always carry are left
// out: a tenant cannot widen its VMs' egress by copying the labels.
func (o Options) csiController() networkingv1.NetworkPolicySpec {
	cidrs := o.APIServerCIDRs
	if len(cidrs) == 0 {
		cidrs = []string{"0.0.0.0/0", "::/0"}
	}
	var to []networkingv1.NetworkPolicyPeer
	for _, cidr := range cidrs {
		to = append(to, ipBlock(cidr))
	}
	return networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{
			MatchLabels: map[string]string{tenant.ManagedByLabel: tenant.ManagedByValue},
			MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: addons.ControllerPodLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{addons.ControllerName, addons.CCMName}},
				{Key: "kubevirt.io", Operator: metav1.LabelSelectorOpDoesNotExist},
				{Key: "cdi.kubevirt.io", Operator: metav1.LabelSelectorOpDoesNotExist},
			},
		},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
		Egress: []networkingv1.NetworkPolicyEgressRule{{
			To:    to,
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP)}},
		}},
	}
}

// ParseCustom reads the custom policies of a ConfigMap, sorted by name.
// Every entry is checked with the API server's rules for a NetworkPolicy
// (see validateSpec); invalid entries are reported together, each by its
// key and field, and left out.
func ParseCustom(cm *corev1.ConfigMap) ([]networkingv1.NetworkPolicy, error) {
	var out []networkingv1.NetworkPolicy
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(cm.Data)) {
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			problems = append(problems, fmt.Sprintf("policy %q: invalid name: %s", name, strings.Join(errs, ", ")))
			continue
		}
		var spec networkingv1.NetworkPolicySpec
		if err := yaml.UnmarshalStrict([]byte(cm.Data[name]), &spec); err != nil {
			problems = append(problems, fmt.Sprintf("policy %q: %v", name, err))
			continue
		}
		if errs := validateSpec(&spec); len(errs) > 0 {
			problems = append(problems, fmt.Sprintf("policy %q: %s", name, describe(errs)))
			continue
		}
		out = append(out, policy(cm.Namespace, name, LabelCustom, withDefaults(spec)))
	}
	if len(problems) > 0 {
		return out, fmt.Errorf("invalid policies in ConfigMap %s/%s: %s", cm.Namespace, cm.Name, strings.Join(problems, "; "))
	}
	return out, nil
}

func policy(namespace, name, kind string, spec networkingv1.NetworkPolicySpec) networkingv1.NetworkPolicy {
	return networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace,
			Name:      name,
			Labels:    map[string]string{tenant.ManagedByLabel: tenant.ManagedByValue, Label: kind},
		},
		Spec: spec,
	}
}

func port(protocol corev1.Protocol, n int32) networkingv1.NetworkPolicyPort {
	p := intstr.FromInt32(n)
	return networkingv1.NetworkPolicyPort{Protocol: &protocol, Port: &p}
}

func ipBlock(cidr string, except ...string) networkingv1.NetworkPolicyPeer {
	return networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: cidr, Except: except}}
}

// hostCIDR returns the single-address CIDR of ip.
func hostCIDR(ip string) string {
	if strings.Contains(ip, ":") {
		return ip + "/128"
	}
	return ip + "/32"
}

// family returns the CIDRs of one address family.
func family(cidrs []string, v6 bool) []string {
	var out []string
	for _, c := range cidrs {
		if strings.Contains(c, ":") == v6 {
			out = append(out, c)
		}
	}
	return out
}

// withDefaults fills in what the API server defaults, so a stored policy
// compares equal to the spec it was made from: policyTypes from the rules
// present and TCP for ports without a protocol.
func withDefaults(spec networkingv1.NetworkPolicySpec) networkingv1.NetworkPolicySpec {
	if len(spec.PolicyTypes) == 0 {
		spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(spec.Egress) > 0 {
			spec.PolicyTypes = append(spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
	tcp := func(ports []networkingv1.NetworkPolicyPort) {
		for i := range ports {
			if ports[i].Protocol == nil {
				ports[i].Protocol = ptr.To(corev1.ProtocolTCP)
			}
		}
	}
	for i := range spec.Ingress {
		tcp(spec.Ingress[i].Ports)
	}
	for i := range spec.Egress {
		tcp(spec.Egress[i].Ports)
	}
	return spec
}
