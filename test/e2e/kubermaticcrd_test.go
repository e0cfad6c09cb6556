package e2e

import (
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// testKubermaticMachineCRD runs a MachineSet while the Machine CRD serves
// no status subresource, as Kubermatic's own Machine CRD does not: the
// controller writes each status as part of its Machine, every Machine gets
// its Node, and deletion leaves nothing. The CRD serves the subresource
// again afterwards.
func (s *suite) testKubermaticMachineCRD(t *testing.T) {
	ctx := t.Context()
	s.user.ServeMachineStatus(t, false)
	defer s.user.ServeMachineStatus(t, true)
	labels := map[string]string{"name": "kubermatic-crd"}
	ms := &clusterv1alpha1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Name: "kubermatic-crd", Namespace: machineNamespace},
		Spec: clusterv1alpha1.MachineSetSpec{
			Replicas: ptr.To[int32](2),
			Selector: metav1.LabelSelector{MatchLabels: labels},
			Template: clusterv1alpha1.MachineTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       machineSpec(providerSpec),
			},
		},
	}
	if err := s.user.Client.Create(ctx, ms); err != nil {
		t.Fatal(err)
	}
	machines := s.waitForReplicas(t, ms, 2)
	s.checkNodes(t, machines)
	for _, m := range machines {
		if len(m.Status.Addresses) == 0 {
			t.Errorf("Machine %s has no addresses in its status", m.Name)
		}
	}
	if err := s.user.Client.Delete(ctx, ms); err != nil {
		t.Fatal(err)
	}
	waitFor(t, timeout, "everything deleted", func() (bool, string) {
		left := s.leftovers(t)
		return left == "", left
	})
}
