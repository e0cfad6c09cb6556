package vlan

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Template is a kind of network the operator's infra nodes provide.
type Template string

const (
	// TemplateBridge attaches VMs to a Linux bridge on every infra node
	// (CNI plugin bridge) as untagged ports of the tenant's VLAN; the
	// bridge's uplink carries the VLAN range tagged.
	TemplateBridge Template = "bridge"
	// TemplateOVS attaches VMs to an Open vSwitch bridge on every infra
	// node (ovs-cni) as access ports of the tenant's VLAN.
	TemplateOVS Template = "ovs"
)

// Templates are the templates Options.Template accepts.
var Templates = []Template{TemplateBridge, TemplateOVS}

// DefaultNetworkName is the name of the NetworkAttachmentDefinition in
// every tenant namespace.
const DefaultNetworkName = "tenant-vlan"

// DefaultWorkers is how many TenantClusters are reconciled at once.
const DefaultWorkers = 4

// Range is an inclusive range of VLAN ids.
type Range struct {
	First, Last int
}

// ParseRange parses "first-last" or a single id.
func ParseRange(s string) (Range, error) {
	first, last, isRange := strings.Cut(strings.TrimSpace(s), "-")
	if !isRange {
		last = first
	}
	a, errA := strconv.Atoi(strings.TrimSpace(first))
	b, errB := strconv.Atoi(strings.TrimSpace(last))
	if errA != nil || errB != nil {
		return Range{}, fmt.Errorf("VLAN range %q: must be <first>-<last> or one id, e.g. 100-199", s)
	}
	r := Range{First: a, Last: b}
	return r, r.Validate()
}

// Validate checks that r holds ids 1 to 4094 (0 and 4095 are reserved
// by IEEE 802.1Q) in ascending order.
func (r Range) Validate() error {
	if r.First < 1 || r.Last > 4094 || r.First > r.Last {
		return fmt.Errorf("VLAN range %s: ids must be between 1 and 4094, the first not above the last", r)
	}
	return nil
}

// Size is the number of ids in r.
func (r Range) Size() int { return r.Last - r.First + 1 }

// Contains reports whether id is in r.
func (r Range) Contains(id int) bool { return id >= r.First && id <= r.Last }

func (r Range) String() string { return fmt.Sprintf("%d-%d", r.First, r.Last) }

// Options configure the VLAN networks of tenant clusters.
type Options struct {
	// Template is the kind of network; "" turns VLANs off.
	Template Template
	// Range holds the VLAN ids tenant clusters get.
	Range Range
	// Bridge is the Linux or Open vSwitch bridge on every infra node that
	// VMs are attached to.
	Bridge string
	// MTU of the VMs' interfaces on the bridge; 0 keeps the plugin's
	// default (the bridge's MTU for ovs-cni, 1500 for the bridge plugin).
	MTU int
	// NetworkName is the name of the NetworkAttachmentDefinition in
	// every tenant namespace; DefaultNetworkName when empty.
	NetworkName string
	// ClaimNamespace holds the claim objects, one Lease per claimed id.
	ClaimNamespace string
	// Workers is how many TenantClusters are reconciled at once;
	// DefaultWorkers when 0.
	Workers int
}

// Enabled reports whether o turns VLANs on.
func (o Options) Enabled() bool { return o.Template != "" }

// Validate checks o when it turns VLANs on, naming the flag of a bad
// field and what it allows.
func (o Options) Validate() error {
	if !o.Enabled() {
		return nil
	}
	if o.Template != TemplateBridge && o.Template != TemplateOVS {
		return fmt.Errorf("--tenant-vlan-template: must be %s or %s (or empty to turn VLANs off), got %q", TemplateBridge, TemplateOVS, o.Template)
	}
	if err := o.Range.Validate(); err != nil {
		return fmt.Errorf("--tenant-vlan-range: %w", err)
	}
	// Linux limits interface names to 15 bytes (IFNAMSIZ - 1).
	if o.Bridge == "" || len(o.Bridge) > 15 || strings.ContainsAny(o.Bridge, "/: \t\n") {
		return fmt.Errorf("--tenant-vlan-bridge: must be the name of the bridge on the infra nodes, 1 to 15 characters without '/', ':' or spaces, got %q", o.Bridge)
	}
	if o.MTU != 0 && (o.MTU < 576 || o.MTU > 65535) {
		return fmt.Errorf("--tenant-vlan-mtu: must be 0 (the plugin's default) or between 576 and 65535, got %d", o.MTU)
	}
	if errs := validation.IsDNS1123Subdomain(o.networkName()); len(errs) > 0 {
		return fmt.Errorf("--tenant-vlan-network-name: %s", strings.Join(errs, ", "))
	}
	if errs := validation.IsDNS1123Label(o.ClaimNamespace); len(errs) > 0 {
		return fmt.Errorf("--tenant-vlan-claim-namespace: must name the namespace of the VLAN claims (the chart uses its release namespace): %s", strings.Join(errs, ", "))
	}
	if o.Workers < 0 {
		return fmt.Errorf("tenant VLAN workers: must not be negative, got %d", o.Workers)
	}
	return nil
}

func (o Options) networkName() string {
	if o.NetworkName == "" {
		return DefaultNetworkName
	}
	return o.NetworkName
}

func (o Options) workers() int {
	if o.Workers == 0 {
		return DefaultWorkers
	}
	return o.Workers
}
