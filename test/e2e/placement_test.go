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
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// withCloudProviderSpec returns providerSpec with fields added to its
// cloudProviderSpec and to its virtualMachine.
func withCloudProviderSpec(cloud, virtualMachine string) string {
	replacement := `"virtualMachine": {` + virtualMachine + `"template": {`
	if cloud != "" {
		replacement = cloud + `, ` + replacement
	}
	return strings.Replace(providerSpec, `"virtualMachine": {"template": {`, replacement, 1)
}

// nodePreset is the affinity field of a node (anti-)affinity preset on the
// infra nodes' hostnames.
func nodePreset(field, kind string, nodes ...string) string {
	return fmt.Sprintf(`"affinity": {%q: {"type": %q, "key": "kubernetes.io/hostname", "values": ["%s"]}}`, field, kind, strings.Join(nodes, `", "`))
}

// placementCase is a MachineDeployment whose VMs kube-scheduler places and
// what the placement must show.
type placementCase struct {
	name     string
	replicas int32
	spec     string
	// check returns what is wrong with the placement (nodes: infra node of
	// each Machine's VMI, "" for one not scheduled), or "" once it is
	// right; done is false while the placement is still under way.
	check func(nodes map[string]string) (done bool, wrong string)
}

// testPlacement runs MachineDeployments with the provider's scheduling
// presets side by side and checks where kube-scheduler put their VMs: hard
// and soft pod affinity keep a MachineDeployment's VMs on one infra node,
// hard pod anti-affinity gives 4 VMs on 3 nodes one that stays Pending with
// kube-scheduler's reason as an event on its Machine, and a zone pins the
// VMs to that zone's node and labels their Nodes with it, and the hard node
// presets put them where they say. Each outcome
// differs from what kube-scheduler does without the preset (it spreads
// pods over the least allocated nodes).
func (s *suite) testPlacement(t *testing.T) {
	zone := simulator.ZoneOf(1)
	cases := []placementCase{
		{name: "together-hard", replicas: 3, spec: withCloudProviderSpec(`"affinity": {"podAffinityPreset": "hard"}`, ""), check: onOneNode(3)},
		{name: "together-soft", replicas: 3, spec: withCloudProviderSpec(`"affinity": {"podAffinityPreset": "soft"}`, ""), check: onOneNode(3)},
		{name: "apart-hard", replicas: 4, spec: withCloudProviderSpec(`"affinity": {"podAntiAffinityPreset": "hard"}`, ""), check: apartWithOnePending},
		{name: "zone-pinned", replicas: 2, spec: withCloudProviderSpec("", `"location": {"zone": "`+zone+`"}, `), check: onNodes(2, infraNodes[1])},
		{name: "node-hard", replicas: 2, spec: withCloudProviderSpec(nodePreset("nodeAffinityPreset", "hard", infraNodes[2]), ""), check: onNodes(2, infraNodes[2])},
		{name: "node-anti-hard", replicas: 2, spec: withCloudProviderSpec(nodePreset("nodeAntiAffinityPreset", "hard", infraNodes[0], infraNodes[1]), ""),
			check: onNodes(2, infraNodes[2])},
	}
	var deployments []ctrlruntimeclient.Object
	for _, pc := range cases {
		md := newDeployment(pc.name, pc.replicas, pc.spec, 1, 0)
		if err := s.user.Client.Create(t.Context(), md); err != nil {
			t.Fatal(err)
		}
		deployments = append(deployments, md)
	}
	placed := map[string]map[string]string{}
	waitFor(t, 2*timeout, "the VMs placed", func() (bool, string) {
		var states []string
		all := true
		for _, pc := range cases {
			nodes := s.placementOf(t, pc.name)
			done, wrong := pc.check(nodes)
			all = all && done && wrong == ""
			states = append(states, fmt.Sprintf("%s: %v %s", pc.name, nodes, wrong))
			placed[pc.name] = nodes
		}
		return all, strings.Join(states, "; ")
	})
	s.checkZoneLabels(t, placed["zone-pinned"], zone)
	pending := ""
	for m, node := range placed["apart-hard"] {
		if node == "" {
			pending = m
		}
	}
	s.expectWaitingEvent(t, pending, "didn't match pod anti-affinity rules")
	s.deleteAndWait(t, deployments...)
}

// placementOf returns the infra node of the VMI of each Machine of the
// MachineDeployment ("" while its VMI is not scheduled). A Machine counts
// once its VMI runs or waits with PodScheduled False.
func (s *suite) placementOf(t *testing.T, md string) map[string]string {
	t.Helper()
	machines := &clusterv1alpha1.MachineList{}
	if err := s.user.Client.List(t.Context(), machines, ctrlruntimeclient.InNamespace(machineNamespace),
		ctrlruntimeclient.MatchingLabels{"name": md}); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range machines.Items {
		vmi := s.vmi(t, m.Name)
		switch {
		case vmi.Status.Phase == kubevirtcorev1.Running:
			out[m.Name] = vmi.Status.NodeName
		case unschedulable(vmi):
			out[m.Name] = ""
		}
	}
	return out
}

// unschedulable reports whether the VMI waits for a pod kube-scheduler
// placed nowhere (virt-controller copies the pod's condition).
func unschedulable(vmi *kubevirtcorev1.VirtualMachineInstance) bool {
	return slices.ContainsFunc(vmi.Status.Conditions, func(c kubevirtcorev1.VirtualMachineInstanceCondition) bool {
		return string(c.Type) == string(corev1.PodScheduled) && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
	})
}

// onOneNode wants n VMs, all running on the same infra node.
func onOneNode(n int) func(map[string]string) (bool, string) {
	return func(nodes map[string]string) (bool, string) {
		if len(nodes) < n || slices.Contains(valuesOf(nodes), "") {
			return false, ""
		}
		if distinct := uniqueNodes(nodes); len(distinct) != 1 {
			return true, fmt.Sprintf("on %d infra nodes %v, want one", len(distinct), distinct)
		}
		return true, ""
	}
}

// onNodes wants n VMs, all running on the given infra node.
func onNodes(n int, node string) func(map[string]string) (bool, string) {
	return func(nodes map[string]string) (bool, string) {
		if len(nodes) < n || slices.Contains(valuesOf(nodes), "") {
			return false, ""
		}
		if distinct := uniqueNodes(nodes); len(distinct) != 1 || distinct[0] != node {
			return true, fmt.Sprintf("on %v, want only %s", distinct, node)
		}
		return true, ""
	}
}

// apartWithOnePending wants 4 VMs for the 3 infra nodes: 3 running on
// different nodes and one that kube-scheduler places nowhere.
func apartWithOnePending(nodes map[string]string) (bool, string) {
	if len(nodes) < 4 {
		return false, ""
	}
	running := slices.DeleteFunc(valuesOf(nodes), func(n string) bool { return n == "" })
	if len(running) < 3 {
		return false, ""
	}
	if len(running) != 3 || len(uniqueNodes(nodes)) != 3 {
		return true, fmt.Sprintf("%d running on %v, want 3 on 3 nodes and 1 Pending", len(running), uniqueNodes(nodes))
	}
	return true, ""
}

func valuesOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// uniqueNodes returns the infra nodes VMs run on, sorted.
func uniqueNodes(nodes map[string]string) []string {
	out := slices.DeleteFunc(valuesOf(nodes), func(n string) bool { return n == "" })
	slices.Sort(out)
	return slices.Compact(out)
}

// checkZoneLabels checks that the Node of each Machine carries the zone of
// the infra node its VM runs on.
func (s *suite) checkZoneLabels(t *testing.T, placed map[string]string, zone string) {
	t.Helper()
	for m := range placed {
		waitFor(t, timeout, "the zone label on the Node of "+m, func() (bool, string) {
			machine := &clusterv1alpha1.Machine{}
			if err := s.user.Client.Get(t.Context(), ctrlruntimeclient.ObjectKey{Namespace: machineNamespace, Name: m}, machine); err != nil {
				return false, err.Error()
			}
			if machine.Status.NodeRef == nil {
				return false, "no Node linked"
			}
			got := s.node(t, machine.Status.NodeRef.Name).Labels[corev1.LabelTopologyZone]
			return got == zone, fmt.Sprintf("zone label %q, want %q", got, zone)
		})
	}
}

// expectWaitingEvent waits for the InstanceWaiting event of a Machine
// carrying kube-scheduler's words.
func (s *suite) expectWaitingEvent(t *testing.T, name, words string) {
	t.Helper()
	if name == "" {
		t.Fatal("no Machine waits for its VM to be scheduled")
	}
	s.waitForEvent(t, "an InstanceWaiting event on "+name, machine.ReasonInstanceWaiting, words,
		func(e eventsv1.Event) bool { return e.Regarding.Name == name })
}
