package e2e

import (
	"strings"
	"testing"

	"k8c.io/machine-controller/sdk/apis/cluster/common"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/machinedeployment"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// testNetworkChange edits the CNI configuration of the tenant network a
// MachineDeployment's VMs are attached to: running VMs keep the old one,
// so the MachineDeployment rolls all its Machines (seed 000), through the
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

	labels := map[string]string{"name": "netpool"}
	spec := strings.Replace(providerSpec, `"virtualMachine": {"template": {`, `"virtualMachine": {"networks": [{"name": "tenant-net"}], "template": {`, 1)
	md := &clusterv1alpha1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "netpool", Namespace: machineNamespace},
		Spec: clusterv1alpha1.MachineDeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: metav1.LabelSelector{MatchLabels: labels},
			Template: clusterv1alpha1.MachineTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: machineSpec(spec)},
			Strategy: &clusterv1alpha1.MachineDeploymentStrategy{
				Type: common.RollingUpdateMachineDeploymentStrategyType,
				RollingUpdate: &clusterv1alpha1.MachineRollingUpdateDeployment{
					MaxSurge: ptr.To(intstr.FromInt(1)), MaxUnavailable: ptr.To(intstr.FromInt(0)),
				},
			},
		},
	}
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
	s.deleteDeployment(t, md)
}
