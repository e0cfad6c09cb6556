package e2e

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	kubevirtcorev1 "kubevirt.io/api/core/v1"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/machine"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// timeout bounds each wait for convergence. KubeVirt's and CDI's own
// controllers take their time (a rollout of three Machines takes about 20 s
// on an idle 2-core machine); the waits test what happens, not how fast.
const timeout = 90 * time.Second

// providerSpec is a valid KubeVirt providerSpec; the infra kubeconfig
// comes from the controller's KUBEVIRT_KUBECONFIG.
const providerSpec = `{
  "cloudProvider": "kubevirt",
  "sshPublicKeys": ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHkWcXl1Yc1uX1l2b6Hc9rQv7Q2m7K0b3E9fQm2Qz8Yx e2e@example"],
  "operatingSystem": "ubuntu",
  "operatingSystemSpec": {"distUpgradeOnBoot": false},
  "cloudProviderSpec": {
    "clusterName": "e2e",
    "virtualMachine": {"template": {
      "cpus": "1", "memory": "2048M",
      "primaryDisk": {"osImage": "http://127.0.0.1:8080/ubuntu.img", "size": "10Gi", "storageClassName": "standard"}
    }}
  }
}`

func TestMachineController(t *testing.T) {
	s := startSuite(t)
	s.subtest("MachineSet lifecycle", s.testMachineSetLifecycle)
	s.subtest("Kubermatic's Machine CRD, without a status subresource", s.testKubermaticMachineCRD)
	s.subtest("invalid spec", s.testInvalidSpec)
	s.subtest("KubeVirt's and CDI's rendering", s.testKubeVirtRendering)
	s.subtest("placement by kube-scheduler", s.testPlacement)
	s.subtest("MachineDeployment lifecycle", s.testMachineDeployment)
	s.subtest("MachineDeployment scaled mid-rollout", s.testScaleMidRollout)
	s.subtest("tenant network change rolls a MachineDeployment", s.testNetworkChange)
	s.subtest("infra node labels copied to Nodes", s.testInfraNodeLabels)
	s.subtest("stopped VM", s.testStoppedVM)
	s.subtest("infra node drain", s.testEvacuation)
	s.subtest("infra connection cut mid scale-up", s.testConnectionCut)
	s.subtest("infra API server restart mid scale-up", s.testAPIServerRestart)
	s.subtest("controller restart mid-create", s.testControllerRestart)
}

func machineSpec(raw string) clusterv1alpha1.MachineSpec {
	spec := clusterv1alpha1.MachineSpec{
		ProviderSpec: clusterv1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: []byte(raw)}},
		Versions:     clusterv1alpha1.MachineVersionInfo{Kubelet: "1.33.4"},
		Taints:       []corev1.Taint{{Key: "e2e", Value: "yes", Effect: corev1.TaintEffectPreferNoSchedule}},
	}
	spec.Labels = map[string]string{"e2e/pool": "workers"}
	spec.Annotations = map[string]string{"e2e/note": "from the Machine"}
	return spec
}

func (s *suite) testMachineSetLifecycle(t *testing.T) {
	ctx := t.Context()
	c := s.user.Client
	labels := map[string]string{"name": "workers"}
	ms := &clusterv1alpha1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Name: "workers", Namespace: machineNamespace},
		Spec: clusterv1alpha1.MachineSetSpec{
			Replicas:     ptr.To[int32](3),
			DeletePolicy: string(clusterv1alpha1.NewestMachineSetDeletePolicy),
			Selector:     metav1.LabelSelector{MatchLabels: labels},
			Template: clusterv1alpha1.MachineTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       machineSpec(providerSpec),
			},
		},
	}
	if err := c.Create(ctx, ms); err != nil {
		t.Fatal(err)
	}
	first := s.waitForReplicas(t, ms, 3)
	s.checkNodes(t, first)

	// creationTimestamp has a resolution of one second: the Machines of the
	// scale-up must be visibly newer for deletePolicy Newest to tell.
	time.Sleep(time.Until(newest(first).Add(time.Second)))
	s.scale(t, ms, 5)
	s.waitForReplicas(t, ms, 5)

	s.scale(t, ms, 1)
	last := s.waitForReplicas(t, ms, 1)
	// Newest deletes the two Machines of the scale-up and two of the first three.
	if !slices.Contains(names(first), last[0].Name) {
		t.Errorf("deletePolicy Newest kept %s, want one of the first Machines %v", last[0].Name, names(first))
	}

	// A workload on the last Node is evicted before its VM goes.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "workload", Namespace: metav1.NamespaceDefault},
		Spec: corev1.PodSpec{
			NodeName:                      last[0].Status.NodeRef.Name,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []corev1.Container{{Name: "app", Image: "registry.example/app:1"}},
		},
	}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	s.deleteAndWait(t, ms)
}

// scale sets the MachineSet's replicas.
func (s *suite) scale(t *testing.T, ms *clusterv1alpha1.MachineSet, replicas int32) {
	t.Helper()
	base := ms.DeepCopy()
	ms.Spec.Replicas = ptr.To(replicas)
	if err := s.user.Client.Patch(t.Context(), ms, ctrlruntimeclient.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
}

// waitForReplicas waits until the MachineSet has exactly n Machines, each
// with a nodeRef, n VMs and n Nodes exist, and the status counts n ready
// and available replicas. It returns the Machines.
func (s *suite) waitForReplicas(t *testing.T, ms *clusterv1alpha1.MachineSet, n int) []clusterv1alpha1.Machine {
	t.Helper()
	return s.waitForReplicasWithin(t, ms, n, timeout)
}

// waitForReplicasWithin is waitForReplicas with its own bound.
func (s *suite) waitForReplicasWithin(t *testing.T, ms *clusterv1alpha1.MachineSet, n int, within time.Duration) []clusterv1alpha1.Machine {
	t.Helper()
	ctx := t.Context()
	var machines clusterv1alpha1.MachineList
	waitFor(t, within, fmt.Sprintf("%d replicas", n), func() (bool, string) {
		machines = clusterv1alpha1.MachineList{}
		vms := &kubevirtcorev1.VirtualMachineList{}
		nodes := &corev1.NodeList{}
		got := &clusterv1alpha1.MachineSet{}
		if err := s.user.Client.List(ctx, &machines, ctrlruntimeclient.InNamespace(machineNamespace)); err != nil {
			return false, err.Error()
		}
		if err := s.infra.Client.List(ctx, vms, ctrlruntimeclient.InNamespace(infraNamespace)); err != nil {
			return false, err.Error()
		}
		if err := s.user.Client.List(ctx, nodes); err != nil {
			return false, err.Error()
		}
		if err := s.user.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(ms), got); err != nil {
			return false, err.Error()
		}
		linked := 0
		var machineErrors []string
		for _, m := range machines.Items {
			if m.Status.NodeRef != nil && m.DeletionTimestamp == nil {
				linked++
			}
			if m.Status.ErrorMessage != nil {
				machineErrors = append(machineErrors, m.Name+": "+*m.Status.ErrorMessage)
			}
		}
		st := got.Status
		state := fmt.Sprintf("machines=%d linked=%d vms=%d nodes=%d (not ready: %v) status=%d/%d/%d errors=%v", len(machines.Items), linked,
			len(vms.Items), len(nodes.Items), notReady(nodes.Items), st.Replicas, st.ReadyReplicas, st.AvailableReplicas, machineErrors)
		ok := len(machines.Items) == n && linked == n && len(vms.Items) == n && len(nodes.Items) == n &&
			st.Replicas == int32(n) && st.ReadyReplicas == int32(n) && st.AvailableReplicas == int32(n)
		return ok, state
	})
	return machines.Items
}

// notReady names the Nodes whose Ready condition is not True.
func notReady(nodes []corev1.Node) []string {
	var names []string
	for _, n := range nodes {
		ready := false
		for _, c := range n.Status.Conditions {
			ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
		}
		if !ready {
			names = append(names, n.Name)
		}
	}
	return names
}

// checkNodes checks that every Machine's Node carries what the Machine
// wants on it and that the Machine reports the VM's address.
func (s *suite) checkNodes(t *testing.T, machines []clusterv1alpha1.Machine) {
	t.Helper()
	for _, m := range machines {
		node := &corev1.Node{}
		if err := s.user.Client.Get(t.Context(), ctrlruntimeclient.ObjectKey{Name: m.Status.NodeRef.Name}, node); err != nil {
			t.Fatal(err)
		}
		// The simulated guests register without one: the controller sets
		// it, as no cloud controller manager runs here.
		if diff := cmp.Diff("kubevirt://"+m.Name, node.Spec.ProviderID); diff != "" {
			t.Errorf("Node of %s: providerID (-want +got):\n%s", m.Name, diff)
		}
		got := map[string]string{
			"owner": node.Labels[machine.LabelOwnedBy], "pool": node.Labels["e2e/pool"],
			"note": node.Annotations["e2e/note"], "machine": node.Annotations[machine.AnnotationMachine],
		}
		want := map[string]string{
			"owner": string(m.UID), "pool": "workers", "note": "from the Machine", "machine": m.Namespace + "/" + m.Name,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Node of %s (-want +got):\n%s", m.Name, diff)
		}
		if !slices.ContainsFunc(node.Spec.Taints, func(tt corev1.Taint) bool { return tt.Key == "e2e" && tt.Value == "yes" }) {
			t.Errorf("Node of %s lacks the Machine's taint: %v", m.Name, node.Spec.Taints)
		}
		s.waitForAddress(t, m, node)
		if !slices.Equal(m.Finalizers, []string{machine.FinalizerDelete, machine.FinalizerNodeDelete}) {
			t.Errorf("Machine %s finalizers = %v", m.Name, m.Finalizers)
		}
	}
}

// waitForAddress waits until the Machine reports its Node's first address.
// The Machine may have had its nodeRef without it: the controller links the
// Node by providerID even before its infra cache has the VMI's address, and
// writes the address on the VMI's event.
func (s *suite) waitForAddress(t *testing.T, m clusterv1alpha1.Machine, node *corev1.Node) {
	t.Helper()
	poll.Until(t, timeout, func() error {
		got := &clusterv1alpha1.Machine{}
		if err := s.user.Client.Get(t.Context(), ctrlruntimeclient.ObjectKeyFromObject(&m), got); err != nil {
			return err
		}
		if diff := cmp.Diff(node.Status.Addresses[:1], got.Status.Addresses); diff != "" {
			return fmt.Errorf("Machine %s addresses (-Node +Machine):\n%s", m.Name, diff)
		}
		return nil
	})
}

// deleteAndWait deletes the objects (MachineSets, MachineDeployments) and
// waits until nothing is left of them on either cluster.
func (s *suite) deleteAndWait(t *testing.T, objs ...ctrlruntimeclient.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := s.user.Client.Delete(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, timeout, "everything deleted", func() (bool, string) {
		left := s.leftovers(t)
		return left == "", left
	})
}

// leftovers describes what is left of the MachineSets and their Machines
// on both clusters.
func (s *suite) leftovers(t *testing.T) string {
	t.Helper()
	var parts []string
	count := func(c ctrlruntimeclient.Client, name string, list ctrlruntimeclient.ObjectList, opts ...ctrlruntimeclient.ListOption) {
		if err := c.List(t.Context(), list, opts...); err != nil {
			parts = append(parts, fmt.Sprintf("%s: %v", name, err))
			return
		}
		if n := meta.LenList(list); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, name))
		}
	}
	inInfra := ctrlruntimeclient.InNamespace(infraNamespace)
	count(s.user.Client, "MachineSets", &clusterv1alpha1.MachineSetList{})
	count(s.user.Client, "Machines", &clusterv1alpha1.MachineList{})
	count(s.user.Client, "Nodes", &corev1.NodeList{})
	count(s.user.Client, "Pods", &corev1.PodList{}, ctrlruntimeclient.InNamespace(metav1.NamespaceDefault))
	count(s.infra.Client, "VirtualMachines", &kubevirtcorev1.VirtualMachineList{}, inInfra)
	count(s.infra.Client, "VirtualMachineInstances", &kubevirtcorev1.VirtualMachineInstanceList{}, inInfra)
	// The provider's image cache (DataVolumes labelled
	// kkp-kubevirt.io/image-cache) is shared by Machines and outlives them.
	notCache, err := labels.NewRequirement("kkp-kubevirt.io/image-cache", selection.DoesNotExist, nil)
	if err != nil {
		t.Fatal(err)
	}
	machineOwned := ctrlruntimeclient.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*notCache)}
	count(s.infra.Client, "DataVolumes", &cdicorev1beta1.DataVolumeList{}, inInfra, machineOwned)
	// CDI labels a DataVolume's PVC and pods like the DataVolume.
	count(s.infra.Client, "PersistentVolumeClaims", &corev1.PersistentVolumeClaimList{}, inInfra, machineOwned)
	count(s.infra.Client, "Pods", &corev1.PodList{}, inInfra, machineOwned)
	count(s.infra.Client, "Secrets", &corev1.SecretList{}, inInfra)
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// invalidSpec is a providerSpec the provider refuses (memory "lots").
const invalidSpec = `{"cloudProvider": "kubevirt", "operatingSystem": "ubuntu", "cloudProviderSpec": {"virtualMachine": {"template": {
      "cpus": "1", "memory": "lots", "primaryDisk": {"osImage": "http://127.0.0.1:8080/ubuntu.img", "size": "10Gi"}}}}}`

// invalidSpecField is the field of invalidSpec that is wrong, as the
// webhook names it in a MachineDeployment.
const invalidSpecField = "spec.template.spec.providerSpec.value.cloudProviderSpec.virtualMachine.template.memory"

// testInvalidSpec: the webhook refuses an invalid spec at apply time; one
// stored without it (as by an identity the webhook exempts, or before it
// was installed) is reported on the Machine and by an event, and so is a
// VM that KubeVirt's admission refuses.
func (s *suite) testInvalidSpec(t *testing.T) {
	ctx := t.Context()
	md := newDeployment("invalid", 1, invalidSpec, 1, 0)
	err := s.user.Client.Create(ctx, md)
	if err == nil || !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), invalidSpecField) {
		t.Fatalf("creating a MachineDeployment with an invalid spec: got %v, want a refusal naming %s", err, invalidSpecField)
	}
	if err := s.user.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(md), &clusterv1alpha1.MachineDeployment{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the refused MachineDeployment: got %v, want NotFound", err)
	}

	c := s.exemptClient(t)
	m := &clusterv1alpha1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: "invalid", Namespace: machineNamespace},
		Spec:       machineSpec(invalidSpec),
	}
	if err := c.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	s.wantMachineError(t, c, m, "")

	// A spec the provider takes whose VM KubeVirt's admission refuses (a
	// disk without a volume) is the Machine's error too, with KubeVirt's
	// reason; nothing of it stays on the infra cluster.
	refused := &clusterv1alpha1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: "refused", Namespace: machineNamespace, Annotations: map[string]string{
			vm.AnnotationVMPatch: `[{"op":"add","path":"/spec/template/spec/domain/devices/disks/-","value":{"name":"nosuchvolume","disk":{"bus":"virtio"}}}]`,
		}},
		Spec: machineSpec(providerSpec),
	}
	if err := c.Create(ctx, refused); err != nil {
		t.Fatal(err)
	}
	s.wantMachineError(t, c, refused, "'nosuchvolume' not found")
}

// wantMachineError waits for an InvalidConfiguration errorMessage holding
// want and its Warning event on m, then until nothing but the Machine is
// left, and deletes m.
func (s *suite) wantMachineError(t *testing.T, c ctrlruntimeclient.Client, m *clusterv1alpha1.Machine, want string) {
	t.Helper()
	ctx := t.Context()
	waitFor(t, timeout, "errorMessage and a Warning event", func() (bool, string) {
		got := &clusterv1alpha1.Machine{}
		if err := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(m), got); err != nil {
			return false, err.Error()
		}
		events := &eventsv1.EventList{}
		if err := c.List(ctx, events, ctrlruntimeclient.InNamespace(machineNamespace)); err != nil {
			return false, err.Error()
		}
		warned := slices.ContainsFunc(events.Items, func(e eventsv1.Event) bool {
			return e.Regarding.Name == m.Name && e.Type == corev1.EventTypeWarning && e.Reason == "InvalidConfiguration"
		})
		msg := ptr.Deref(got.Status.ErrorMessage, "")
		return msg != "" && strings.Contains(msg, want) && ptr.Deref(got.Status.ErrorReason, "") == "InvalidConfiguration" && warned,
			fmt.Sprintf("reason=%q message=%q warned=%v", ptr.Deref(got.Status.ErrorReason, ""), msg, warned)
	})
	// The controller retries a terminal error with its backoff; a retry
	// writes the user data Secret again and deletes it when the VM is
	// refused, so nothing stays between retries.
	waitFor(t, timeout, "only the Machine left after its error", func() (bool, string) {
		left := s.leftovers(t)
		return left == "1 Machines", left
	})
	if err := c.Delete(ctx, m); err != nil {
		t.Fatal(err)
	}
	waitFor(t, timeout, "Machine "+m.Name+" deleted", func() (bool, string) {
		err := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(m), &clusterv1alpha1.Machine{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// names returns the names of Machines.
func names(machines []clusterv1alpha1.Machine) []string {
	out := make([]string, 0, len(machines))
	for _, m := range machines {
		out = append(out, m.Name)
	}
	return out
}

// newest returns the latest creation time of the Machines.
func newest(machines []clusterv1alpha1.Machine) time.Time {
	var latest time.Time
	for _, m := range machines {
		if m.CreationTimestamp.After(latest) {
			latest = m.CreationTimestamp.Time
		}
	}
	return latest
}
