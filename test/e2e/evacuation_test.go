package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/machine"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/simulator"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// liveSpec is providerSpec for a VM that live-migrates on eviction: KubeVirt
// migrates only VMs whose disks are shared (ReadWriteMany).
var liveSpec = strings.Replace(strings.Replace(providerSpec, `"virtualMachine": {`, `"virtualMachine": {"evictionStrategy": "LiveMigrate", `, 1),
	`"storageClassName": "standard"`, `"storageClassName": "standard", "storageAccessType": "ReadWriteMany"`, 1)

// testEvacuation drains the infra nodes of two VMs, as kubectl drain does:
// KubeVirt's eviction admission marks both VMIs for evacuation. The one with
// evacuation policy restart gets its guest Node drained and its VMI
// restarted on another infra node; the LiveMigrate one (shared disks, no
// policy) is live-migrated; a Node a person cordoned stays cordoned. Then
// the other policies (testEvacuationPolicies).
func (s *suite) testEvacuation(t *testing.T) {
	ctx := t.Context()
	c := s.user.Client
	external := s.createMachineSet(t, "external", withVM(providerSpec, `"evacuationPolicy": "restart"`))
	live := s.createMachineSet(t, "live", liveSpec)
	machines := s.waitForMachines(t, 2)
	byName := map[string]clusterv1alpha1.Machine{}
	for _, m := range machines {
		byName[m.Labels["name"]] = m
	}
	ext, mig := byName["external"], byName["live"]

	// A workload on the External Machine's Node is evicted by the drain.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "evacuee", Namespace: metav1.NamespaceDefault},
		Spec: corev1.PodSpec{
			NodeName: ext.Status.NodeRef.Name, TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}},
		},
	}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	extVMI := s.vmi(t, ext.Name)
	migVMI := s.vmi(t, mig.Name)
	extNode := s.drain(t, ext.Name)
	migNode := s.drain(t, mig.Name)
	waitFor(t, timeout, "the External VMI restarted elsewhere and its Node uncordoned", func() (bool, string) {
		vmi, node := s.vmi(t, ext.Name), s.node(t, ext.Status.NodeRef.Name)
		podErr := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(pod), &corev1.Pod{})
		_, marked := node.Annotations[machine.AnnotationEvacuationCordon]
		ok := vmi.UID != extVMI.UID && vmi.Status.Phase == kubevirtcorev1.Running && vmi.Status.NodeName != extNode &&
			!node.Spec.Unschedulable && !marked && apierrors.IsNotFound(podErr)
		return ok, fmt.Sprintf("vmi=%s/%s on %s, unschedulable=%v marked=%v pod=%v", vmi.UID, vmi.Status.Phase, vmi.Status.NodeName, node.Spec.Unschedulable, marked, podErr)
	})
	waitFor(t, timeout, "the LiveMigrate VMI migrated", func() (bool, string) {
		vmi := s.vmi(t, mig.Name)
		return vmi.UID == migVMI.UID && vmi.Status.NodeName != migNode && vmi.Status.EvacuationNodeName == "",
			fmt.Sprintf("vmi=%s on %s evacuation=%q", vmi.UID, vmi.Status.NodeName, vmi.Status.EvacuationNodeName)
	})
	s.expectEvent(t, ext.UID, "Evacuated")
	s.expectEvent(t, mig.UID, "Migrating")
	s.uncordon(t, extNode, migNode)

	// A Node cordoned by a person stays cordoned after an evacuation.
	node := s.node(t, ext.Status.NodeRef.Name)
	base := node.DeepCopy()
	node.Spec.Unschedulable = true
	if err := c.Patch(ctx, node, ctrlruntimeclient.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	before := s.vmi(t, ext.Name)
	s.uncordon(t, s.drain(t, ext.Name))
	waitFor(t, timeout, "the External VMI restarted again", func() (bool, string) {
		vmi := s.vmi(t, ext.Name)
		return vmi.UID != before.UID && vmi.Status.Phase == kubevirtcorev1.Running && s.node(t, node.Name).Spec.Unschedulable,
			fmt.Sprintf("vmi=%s/%s on %s", vmi.UID, vmi.Status.Phase, vmi.Status.NodeName)
	})
	if got := s.waitForMachines(t, 2); !slices.ContainsFunc(got, func(m clusterv1alpha1.Machine) bool { return m.UID == ext.UID }) ||
		!slices.ContainsFunc(got, func(m clusterv1alpha1.Machine) bool { return m.UID == mig.UID }) {
		t.Errorf("evacuated Machines were replaced: %v", names(got))
	}

	s.deleteAndWait(t, external, live)
	t.Run("evacuation policies", s.testEvacuationPolicies)
}

// drain drains the infra node a Machine's VMI runs on and returns it.
func (s *suite) drain(t *testing.T, machine string) string {
	t.Helper()
	node, err := simulator.Evacuate(t.Context(), s.infra.Client, infraNamespace, machine)
	if err != nil {
		t.Fatal(err)
	}
	return node
}

// uncordon makes drained infra nodes schedulable again, once their VMs have
// left.
func (s *suite) uncordon(t *testing.T, nodes ...string) {
	t.Helper()
	for _, node := range nodes {
		if err := simulator.SetSchedulable(t.Context(), s.infra.Client, node, true); err != nil {
			t.Fatal(err)
		}
	}
}

// createMachineSet creates a MachineSet of one Machine labelled name=<name>.
func (s *suite) createMachineSet(t *testing.T, name, spec string) *clusterv1alpha1.MachineSet {
	t.Helper()
	labels := map[string]string{"name": name}
	ms := &clusterv1alpha1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: machineNamespace},
		Spec: clusterv1alpha1.MachineSetSpec{
			Replicas: ptr.To[int32](1),
			Selector: metav1.LabelSelector{MatchLabels: labels},
			Template: clusterv1alpha1.MachineTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: machineSpec(spec)},
		},
	}
	if err := s.user.Client.Create(t.Context(), ms); err != nil {
		t.Fatal(err)
	}
	return ms
}

// waitForMachines waits for n Machines with a Ready Node and returns them.
func (s *suite) waitForMachines(t *testing.T, n int) []clusterv1alpha1.Machine {
	t.Helper()
	var list clusterv1alpha1.MachineList
	waitFor(t, timeout, fmt.Sprintf("%d linked Machines", n), func() (bool, string) {
		list = clusterv1alpha1.MachineList{}
		if err := s.user.Client.List(t.Context(), &list, ctrlruntimeclient.InNamespace(machineNamespace)); err != nil {
			return false, err.Error()
		}
		ready := 0
		for _, m := range list.Items {
			if m.Status.NodeRef != nil && m.DeletionTimestamp == nil && readyNode(s.node(t, m.Status.NodeRef.Name)) {
				ready++
			}
		}
		return len(list.Items) == n && ready == n, fmt.Sprintf("machines=%d ready=%d", len(list.Items), ready)
	})
	return list.Items
}

// vmi returns the VMI of a Machine (empty when there is none).
func (s *suite) vmi(t *testing.T, name string) *kubevirtcorev1.VirtualMachineInstance {
	t.Helper()
	vmi := &kubevirtcorev1.VirtualMachineInstance{}
	if err := s.infra.Client.Get(t.Context(), types.NamespacedName{Namespace: infraNamespace, Name: name}, vmi); ctrlruntimeclient.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	return vmi
}

// node returns a Node of the user cluster (empty when there is none).
func (s *suite) node(t *testing.T, name string) *corev1.Node {
	t.Helper()
	node := &corev1.Node{}
	if err := s.user.Client.Get(t.Context(), types.NamespacedName{Name: name}, node); ctrlruntimeclient.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	return node
}

// readyNode reports whether a Node is Ready.
func readyNode(node *corev1.Node) bool {
	return slices.ContainsFunc(node.Status.Conditions, func(c corev1.NodeCondition) bool {
		return c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
	})
}

// expectEvent waits for an event with reason about the object with uid in
// the Machines' namespace.
func (s *suite) expectEvent(t *testing.T, uid types.UID, reason string) {
	t.Helper()
	s.waitForEvent(t, fmt.Sprintf("a %s event for %s", reason, uid), reason, "",
		func(e eventsv1.Event) bool { return e.Regarding.UID == uid })
}

// waitForEvent waits for an event in the Machines' namespace about an
// object regarding matches, with reason and a note containing words (any
// note for ""). While it waits it reports the reasons and notes of the
// object's other events.
func (s *suite) waitForEvent(t *testing.T, what, reason, words string, regarding func(eventsv1.Event) bool) {
	t.Helper()
	waitFor(t, timeout, what, func() (bool, string) {
		events := &eventsv1.EventList{}
		if err := s.user.Client.List(t.Context(), events, ctrlruntimeclient.InNamespace(machineNamespace)); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, e := range events.Items {
			if !regarding(e) {
				continue
			}
			if e.Reason == reason && strings.Contains(e.Note, words) {
				return true, ""
			}
			seen = append(seen, e.Reason+": "+e.Note)
		}
		return false, fmt.Sprintf("its events are %q", seen)
	})
}
