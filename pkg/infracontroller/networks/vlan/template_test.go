package vlan

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/networks"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantcluster"
)

// TestAttachment compares the NetworkAttachmentDefinition of both
// templates with the exact configuration the plugins are given, and checks
// that the tenant-networks parser, which follows Multus, accepts it.
func TestAttachment(t *testing.T) {
	for _, tc := range []struct {
		name        string
		options     Options
		config      string
		annotations map[string]string
	}{
		{
			name:    "linux bridge with VLAN",
			options: Options{Template: TemplateBridge, Bridge: "br-trunk", Range: Range{100, 199}},
			config:  `{"cniVersion":"0.3.1","name":"tenant-vlan","type":"bridge","bridge":"br-trunk","vlan":142,"preserveDefaultVlan":false,"ipam":{}}`,
		},
		{
			name:    "linux bridge with VLAN, MTU and network name",
			options: Options{Template: TemplateBridge, Bridge: "br1", Range: Range{100, 199}, MTU: 9000, NetworkName: "vm-net"},
			config:  `{"cniVersion":"0.3.1","name":"vm-net","type":"bridge","bridge":"br1","vlan":142,"preserveDefaultVlan":false,"mtu":9000,"ipam":{}}`,
		},
		{
			name:        "open vswitch access port",
			options:     Options{Template: TemplateOVS, Bridge: "br-ex", Range: Range{100, 199}},
			config:      `{"cniVersion":"0.4.0","name":"tenant-vlan","type":"ovs","bridge":"br-ex","vlan":142}`,
			annotations: map[string]string{"k8s.v1.cni.cncf.io/resourceName": "ovs-cni.network.kubevirt.io/br-ex"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := Attachment(tc.options, "cluster-abc", "abc", 142)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(map[string]any{"config": tc.config}, u.Object["spec"]); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			wantLabels := map[string]string{
				tenant.ManagedByLabel: tenant.ManagedByValue, networks.Label: LabelValue, VLANLabel: "142", tenantcluster.OwnerLabel: "abc",
			}
			if diff := cmp.Diff(wantLabels, u.GetLabels()); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.annotations, u.GetAnnotations()); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if u.GetNamespace() != "cluster-abc" || u.GetName() != tc.options.networkName() || u.GroupVersionKind() != networks.NetworkAttachmentDefinitionGVK {
				t.Errorf("object %s %s/%s", u.GroupVersionKind(), u.GetNamespace(), u.GetName())
			}
			if _, err := networks.ParseNetworks(&corev1.ConfigMap{Data: map[string]string{"vlan": tc.config}}); err != nil {
				t.Errorf("refused as a CNI configuration: %v", err)
			}
		})
	}
}

func TestConfigUnknownTemplate(t *testing.T) {
	if _, err := Config(Options{Template: "macvlan"}, 100); err == nil {
		t.Error("an unknown template gave a configuration")
	}
}
