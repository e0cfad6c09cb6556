package e2e

import "testing"

// testKubermaticMachineCRD runs a MachineSet while the Machine CRD serves
// no status subresource, as Kubermatic's own Machine CRD does not: the
// controller writes each status as part of its Machine, every Machine gets
// its Node, and deletion leaves nothing. The CRD serves the subresource
// again afterwards.
func (s *suite) testKubermaticMachineCRD(t *testing.T) {
	s.user.ServeMachineStatus(t, false)
	defer s.user.ServeMachineStatus(t, true)
	ms := s.createMachineSet(t, "kubermatic-crd", providerSpec)
	s.scale(t, ms, 2)
	machines := s.waitForReplicas(t, ms, 2)
	s.checkNodes(t, machines)
	for _, m := range machines {
		if len(m.Status.Addresses) == 0 {
			t.Errorf("Machine %s has no addresses in its status", m.Name)
		}
	}
	s.deleteAndWait(t, ms)
}
