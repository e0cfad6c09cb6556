package config

import (
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var dnsPolicies = []corev1.DNSPolicy{
	corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone,
}

// bindings are the interface bindings a network may ask for.
var bindings = []string{BindingBridge, BindingSRIOV}

// maxNameservers is the Kubernetes limit for a pod's dnsConfig.
const maxNameservers = 3

// dns resolves dnsPolicy and dnsConfig; policy None needs a nameserver.
func (rs *resolution) dns(s *Settings, p *field.Path, vm *VirtualMachine) {
	policyPath, configPath := p.Child("dnsPolicy"), p.Child("dnsConfig")
	policy := corev1.DNSPolicy(rs.str(policyPath, vm.DNSPolicy))
	if policy != "" && enum(rs, policyPath, policy, dnsPolicies) {
		s.DNSPolicy = policy
	}
	nameserversPath := configPath.Child("nameservers")
	if vm.DNSConfig != nil {
		s.DNSConfig = vm.DNSConfig.DeepCopy()
		for i, ns := range vm.DNSConfig.Nameservers {
			if _, err := netip.ParseAddr(ns); err != nil {
				rs.add(field.Invalid(nameserversPath.Index(i), ns, "must be an IPv4 or IPv6 address"))
			}
		}
		if n := len(vm.DNSConfig.Nameservers); n > maxNameservers {
			rs.add(field.TooMany(nameserversPath, n, maxNameservers))
		}
	}
	if policy == corev1.DNSNone && (vm.DNSConfig == nil || len(vm.DNSConfig.Nameservers) == 0) {
		rs.add(field.Required(nameserversPath, "dnsPolicy None needs at least one nameserver"))
	}
}

// location resolves the region and zone overrides and the zone spread.
func (rs *resolution) location(s *Settings, p *field.Path, loc *Location) {
	if loc == nil {
		return
	}
	rs.labelValue(p.Child("region"), loc.Region)
	rs.labelValue(p.Child("zone"), loc.Zone)
	zonesPath := p.Child("zones")
	seen := map[string]bool{}
	for i, zone := range loc.Zones {
		switch {
		case zone == "":
			rs.add(field.Required(zonesPath.Index(i), ""))
		case !rs.labelValue(zonesPath.Index(i), zone):
		case seen[zone]:
			rs.add(field.Duplicate(zonesPath.Index(i), zone))
		}
		seen[zone] = true
	}
	if loc.Zone != "" && len(loc.Zones) > 0 {
		rs.add(field.Forbidden(zonesPath, "may not be set together with zone"))
	}
	s.Region, s.Zone = loc.Region, loc.Zone
	if len(loc.Zones) > 0 {
		s.Zones = slices.Clone(loc.Zones)
	}
}

// networkMultiQueue resolves enableNetworkMultiQueue (default true) and its
// WorkerConfig spelling tuning.devices.networkInterfaceMultiQueue.
func (rs *resolution) networkMultiQueue(s *Settings, p *field.Path, vm *VirtualMachine) {
	enabled, isSet := rs.boolean(p.Child("enableNetworkMultiQueue"), vm.EnableNetworkMultiQueue)
	var tuned *bool
	if vm.Tuning != nil && vm.Tuning.Devices != nil {
		tuned = vm.Tuning.Devices.NetworkInterfaceMultiQueue
	}
	switch {
	case isSet && tuned != nil && *tuned != enabled:
		rs.add(field.Invalid(p.Child("tuning", "devices", "networkInterfaceMultiQueue"), *tuned,
			fmt.Sprintf("must agree with virtualMachine.enableNetworkMultiQueue (%t)", enabled)))
	case isSet:
		s.NetworkMultiQueue = enabled
	case tuned != nil:
		s.NetworkMultiQueue = *tuned
	default:
		s.NetworkMultiQueue = true
	}
}

// networks resolves the Multus network references.
func (rs *resolution) networks(s *Settings, p *field.Path, networks []Network) {
	seen := map[string]int{}
	defaultAt := -1
	for i, n := range networks {
		namePath := p.Index(i).Child("name")
		var namespace, name string
		if n.Name == "" {
			rs.add(field.Required(namePath, "a NetworkAttachmentDefinition as namespace/name or name"))
		} else {
			namespace, name = rs.reference(namePath, n.Name, "must be namespace/name or name", dnsLabelCheck)
		}
		if first, dup := seen[n.Name]; dup && n.Name != "" {
			rs.add(field.Invalid(namePath, n.Name, fmt.Sprintf("duplicates networks[%d]", first)))
		} else {
			seen[n.Name] = i
		}
		if n.Default {
			if defaultAt >= 0 {
				rs.add(field.Invalid(p.Index(i).Child("default"), true,
					fmt.Sprintf("at most one network may be the default; networks[%d] already is", defaultAt)))
			} else {
				defaultAt = i
			}
		}
		binding := BindingBridge
		if n.Binding != "" && enum(rs, p.Index(i).Child("binding"), n.Binding, bindings) {
			binding = n.Binding
		}
		s.Networks = append(s.Networks, NetworkRef{Namespace: namespace, Name: name, Default: n.Default, Binding: binding})
	}
}
