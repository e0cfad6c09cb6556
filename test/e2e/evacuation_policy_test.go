package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/machine"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/simulator"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// withVM adds fields to providerSpec's virtualMachine, e.g.
// `"evacuationPolicy": "restart"`.
func withVM(spec, fields string) string {
	return strings.Replace(spec, `"virtualMachine": {`, `"virtualMachine": {`+fields+`, `, 1)
}

// rwoSpec is providerSpec with a ReadWriteOnce root disk and no evacuation
// policy: its Machine is replaced when its infra node drains.
var rwoSpec = strings.Replace(providerSpec, `"storageClassName": "standard"`,
	`"storageClassName": "standard", "storageAccessType": "ReadWriteOnce"`, 1)

// testEvacuationPolicies drains the infra nodes of two more VMs: one with a
// ReadWriteOnce disk and no policy, whose Machine the MachineSet replaces,
// and one with policy liveMigrate whose migration fails, which is restarted
// on another infra node instead.
func (s *suite) testEvacuationPolicies(t *testing.T) {
	ctx := t.Context()
	replaced := s.createMachineSet(t, "replaced", rwoSpec)
	fallback := s.createMachineSet(t, "fallback", withVM(liveSpec, `"evacuationPolicy": "liveMigrate"`))
	byName := map[string]clusterv1alpha1.Machine{}
	for _, m := range s.waitForMachines(t, 2) {
		byName[m.Labels["name"]] = m
	}
	rep, fb := byName["replaced"], byName["fallback"]
	fbVMI := s.vmi(t, fb.Name)
	if got := fbVMI.Annotations[config.AnnotationEvacuationPolicy]; got != string(config.EvacuationLiveMigrate) {
		t.Errorf("VMI %s has evacuation policy %q, want liveMigrate", fb.Name, got)
	}
	if err := simulator.FailMigrations(ctx, s.infra.Client, infraNamespace, fb.Name); err != nil {
		t.Fatal(err)
	}
	repNode := s.drain(t, rep.Name)
	fbNode := s.drain(t, fb.Name)

	waitFor(t, timeout, "the ReadWriteOnce Machine replaced by its MachineSet", func() (bool, string) {
		list := &clusterv1alpha1.MachineList{}
		if err := s.user.Client.List(ctx, list, ctrlruntimeclient.InNamespace(machineNamespace), ctrlruntimeclient.MatchingLabels{"name": "replaced"}); err != nil {
			return false, err.Error()
		}
		if len(list.Items) != 1 || list.Items[0].UID == rep.UID || list.Items[0].Status.NodeRef == nil {
			return false, fmt.Sprintf("machines %v", names(list.Items))
		}
		vmi := s.vmi(t, list.Items[0].Name)
		return vmi.Status.Phase == kubevirtcorev1.Running && vmi.Status.NodeName != repNode,
			fmt.Sprintf("new VMI %s %s on %s", vmi.Name, vmi.Status.Phase, vmi.Status.NodeName)
	})
	waitFor(t, timeout, "the VMI whose migration failed restarted elsewhere", func() (bool, string) {
		vmi := s.vmi(t, fb.Name)
		return vmi.UID != fbVMI.UID && vmi.Status.Phase == kubevirtcorev1.Running && vmi.Status.NodeName != fbNode,
			fmt.Sprintf("vmi=%s/%s on %s", vmi.UID, vmi.Status.Phase, vmi.Status.NodeName)
	})
	s.expectEvent(t, rep.UID, machine.ReasonEvacuationReplaced)
	// The migration may be KubeVirt's own (evictionStrategy LiveMigrate)
	// or the controller's, whichever came first.
	if note := s.eventNote(t, fb.UID, machine.ReasonEvacuationFallback); !strings.Contains(note, simulator.SimulatedMigrationFailure) {
		t.Errorf("fallback event %q does not name the failed migration", note)
	}
	s.expectEvent(t, fb.UID, machine.ReasonEvacuated)
	if got := s.waitForMachines(t, 2); !slices.ContainsFunc(got, func(m clusterv1alpha1.Machine) bool { return m.UID == fb.UID }) {
		t.Errorf("the Machine whose migration failed was replaced: %v", names(got))
	}
	s.uncordon(t, repNode, fbNode)

	s.deleteAndWait(t, replaced, fallback)
}

// eventNote returns the note of the first event of the reason that regards
// the object, "" when there is none.
func (s *suite) eventNote(t *testing.T, uid types.UID, reason string) string {
	t.Helper()
	events := &eventsv1.EventList{}
	if err := s.user.Client.List(t.Context(), events, ctrlruntimeclient.InNamespace(machineNamespace)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Regarding.UID == uid && e.Reason == reason {
			return e.Note
		}
	}
	return ""
}
