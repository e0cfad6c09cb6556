package e2e

import (
	"strings"
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/machinedeployment"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// testNetworkChange edits the CNI configuration of the tenant network a
// MachineDeployment's VMs are attached to: running VMs keep the old one,
// so the MachineDeployment rolls all its Machines, through the
// watch of the infra cluster's NetworkAttachmentDefinitions.
func (s *suite) testNetworkChange(t *testing.T) {
	ctx := t.Context()
	nad := &unstructured.Unstructured{}
	nad.SetAPIVersion("k8s.cni.cncf.io/v1")
	nad.SetKind("NetworkAttachmentDefinition")
	nad.SetNamespace(infraNamespace)
	nad.SetName("tenant-net")
	setConfig := func(bridge string) {
		t.Helper()
		config := `{"cniVersion":"0.3.1","type":"bridge","bridge":"` + bridge + `"}`
		if err := unstructured.SetNestedField(nad.Object, config, "spec", "config"); err != nil {
			t.Fatal(err)
		}
	}
	setConfig("br-a")
	if err := s.infra.Client.Create(ctx, nad); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.infra.Client.Delete(ctx, nad) })

	spec := strings.Replace(providerSpec, `"virtualMachine": {"template": {`, `"virtualMachine": {"networks": [{"name": "tenant-net"}], "template": {`, 1)
	md := newDeployment("netpool", 2, spec, 1, 0)
	if err := s.user.Client.Create(ctx, md); err != nil {
		t.Fatal(err)
	}
	first := s.waitForDeployment(t, md, 2, "1")
	revision := first[0].Annotations[machinedeployment.AnnotationInfraRevision]
	if revision == "" {
		t.Fatalf("Machine %s carries no infra revision", first[0].Name)
	}

	setConfig("br-b")
	if err := s.infra.Client.Update(ctx, nad); err != nil {
		t.Fatal(err)
	}
	rolled := s.waitForDeployment(t, md, 2, "2")
	for _, m := range rolled {
		if got := m.Annotations[machinedeployment.AnnotationInfraRevision]; got == revision || got == "" {
			t.Errorf("Machine %s has infra revision %q after the network changed from %q", m.Name, got, revision)
		}
		for _, old := range first {
			if m.Name == old.Name {
				t.Errorf("Machine %s of the old network configuration survived", m.Name)
			}
		}
	}
	s.deleteAndWait(t, md)
}
