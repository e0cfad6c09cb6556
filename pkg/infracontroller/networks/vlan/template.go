package vlan

import (
	"encoding/json"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/networks"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantcluster"
)

// LabelValue is the value of networks.Label on the NetworkAttachmentDefinitions
// of this package; the tenant-networks controller keeps only those with
// "true".
const LabelValue = "vlan"

// VLANLabel on a NetworkAttachmentDefinition and a claim holds the VLAN
// id.
const VLANLabel = "infra.kkp-kubevirt.io/tenant-vlan"

// ovsResourceAnnotation asks Multus to schedule a pod only onto nodes whose
// ovs-cni marker reports the bridge, as ovs-cni documents.
const ovsResourceAnnotation = "k8s.v1.cni.cncf.io/resourceName"

// bridgeConfig is the bridge plugin's configuration. The port is an
// untagged member of the VLAN only: preserveDefaultVlan false drops the
// default VLAN 1 from it, which would otherwise let a VM that sends frames
// tagged 1 reach every other tenant's port. ipam is empty: the network
// carries layer 2 only.
type bridgeConfig struct {
	CNIVersion          string   `json:"cniVersion"`
	Name                string   `json:"name"`
	Type                string   `json:"type"`
	Bridge              string   `json:"bridge"`
	VLAN                int      `json:"vlan"`
	PreserveDefaultVlan bool     `json:"preserveDefaultVlan"`
	MTU                 int      `json:"mtu,omitempty"`
	IPAM                struct{} `json:"ipam"`
}

// ovsConfig is ovs-cni's configuration: an access port tagged with the
// VLAN.
type ovsConfig struct {
	CNIVersion string `json:"cniVersion"`
	Name       string `json:"name"`
	Type       string `json:"type"`
	Bridge     string `json:"bridge"`
	VLAN       int    `json:"vlan"`
	MTU        int    `json:"mtu,omitempty"`
}

// Config returns the CNI configuration of the network on VLAN id.
func Config(o Options, id int) (string, error) {
	var conf any
	switch o.Template {
	case TemplateBridge:
		conf = bridgeConfig{CNIVersion: "0.3.1", Name: o.networkName(), Type: "bridge", Bridge: o.Bridge, VLAN: id, MTU: o.MTU}
	case TemplateOVS:
		conf = ovsConfig{CNIVersion: "0.4.0", Name: o.networkName(), Type: "ovs", Bridge: o.Bridge, VLAN: id, MTU: o.MTU}
	default:
		return "", fmt.Errorf("unknown VLAN template %q", o.Template)
	}
	raw, err := json.Marshal(conf)
	if err != nil {
		return "", fmt.Errorf("failed to encode the CNI configuration: %w", err)
	}
	return string(raw), nil
}

// Attachment returns the NetworkAttachmentDefinition of the tenant
// cluster named owner in namespace on VLAN id.
func Attachment(o Options, namespace, owner string, id int) (*unstructured.Unstructured, error) {
	config, err := Config(o, id)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"config": config}}}
	u.SetGroupVersionKind(networks.NetworkAttachmentDefinitionGVK)
	u.SetNamespace(namespace)
	u.SetName(o.networkName())
	u.SetLabels(map[string]string{
		tenant.ManagedByLabel:    tenant.ManagedByValue,
		networks.Label:           LabelValue,
		VLANLabel:                strconv.Itoa(id),
		tenantcluster.OwnerLabel: owner,
	})
	if o.Template == TemplateOVS {
		u.SetAnnotations(map[string]string{ovsResourceAnnotation: "ovs-cni.network.kubevirt.io/" + o.Bridge})
	}
	return u, nil
}
