package e2e

import (
	"slices"
	"strings"
	"testing"

	kubevirtcorev1 "kubevirt.io/api/core/v1"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// placedSpec asks for scheduling and sizing that KubeVirt renders into the
// virt-launcher pod: required node affinity, topology spread, a toleration,
// two CPUs and 2Mi hugepages (the memory a whole number of them).
var placedSpec = withCloudProviderSpec(
	nodePreset("nodeAffinityPreset", "hard", infraNodes...)+`,
    "topologySpreadConstraints": [{"maxSkew": "1", "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"}]`,
	`"tolerations": [{"key": "example.com/dedicated", "operator": "Exists", "effect": "NoSchedule"}],
      "tuning": {"memory": {"hugepages": {"pageSize": "2Mi"}}}, `)

// testKubeVirtRendering runs a Machine through KubeVirt's and CDI's own
// controllers and checks what they made of our VM: the virt-launcher pod
// carries our affinity, topology spread, toleration, resources and
// hugepages as KubeVirt renders them; the root disk was cloned by CDI from
// the image cache (host-assisted, cloner and upload server pods), the cache
// imported by an importer pod; the VMI carries KubeVirt's finalizers, and
// deleting the Machine goes through them.
func (s *suite) testKubeVirtRendering(t *testing.T) {
	placed := strings.NewReplacer(`"cpus": "1"`, `"cpus": "2"`, `"memory": "2048M"`, `"memory": "2048Mi"`).Replace(placedSpec)
	ms := s.createMachineSet(t, "rendered", placed)
	m := s.waitForReplicas(t, ms, 1)[0]
	vmi := s.vmi(t, m.Name)
	for _, f := range []string{kubevirtcorev1.VirtualMachineInstanceFinalizer, kubevirtcorev1.VirtualMachineControllerFinalizer} {
		if !slices.Contains(vmi.Finalizers, f) {
			t.Errorf("VMI finalizers %v lack KubeVirt's %s", vmi.Finalizers, f)
		}
	}

	pod := s.launcherPod(t, vmi)
	if pod.Spec.NodeName != vmi.Status.NodeName {
		t.Errorf("launcher pod on %s, VMI on %s", pod.Spec.NodeName, vmi.Status.NodeName)
	}
	terms := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if !slices.ContainsFunc(terms, func(term corev1.NodeSelectorTerm) bool {
		return slices.ContainsFunc(term.MatchExpressions, func(r corev1.NodeSelectorRequirement) bool {
			return r.Key == corev1.LabelHostname && r.Operator == corev1.NodeSelectorOpIn && slices.Equal(r.Values, infraNodes)
		})
	}) {
		t.Errorf("launcher pod's required node affinity %+v lacks our nodeAffinityPreset", terms)
	}
	if got := pod.Spec.TopologySpreadConstraints; len(got) != 1 || got[0].TopologyKey != corev1.LabelHostname ||
		got[0].WhenUnsatisfiable != corev1.ScheduleAnyway || got[0].MaxSkew != 1 {
		t.Errorf("launcher pod's topology spread %+v, want ours", got)
	}
	if !slices.ContainsFunc(pod.Spec.Tolerations, func(tol corev1.Toleration) bool {
		return tol.Key == "example.com/dedicated" && tol.Operator == corev1.TolerationOpExists && tol.Effect == corev1.TaintEffectNoSchedule
	}) {
		t.Errorf("launcher pod's tolerations %+v lack ours", pod.Spec.Tolerations)
	}
	compute := pod.Spec.Containers[slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == "compute" })]
	for name, want := range map[corev1.ResourceName]string{corev1.ResourceCPU: "2", "hugepages-2Mi": "2048Mi"} {
		got := compute.Resources.Limits[name]
		if got.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("compute container limit %s = %s, want %s", name, got.String(), want)
		}
	}
	s.checkStorageFlow(t, m.Name)

	s.deleteAndWait(t, ms)
}

// launcherPod returns the running virt-launcher pod of a VMI.
func (s *suite) launcherPod(t *testing.T, vmi *kubevirtcorev1.VirtualMachineInstance) *corev1.Pod {
	t.Helper()
	pods := &corev1.PodList{}
	err := s.infra.Client.List(t.Context(), pods, ctrlruntimeclient.InNamespace(infraNamespace),
		ctrlruntimeclient.MatchingLabels{kubevirtcorev1.CreatedByLabel: string(vmi.UID)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		if pods.Items[i].Status.Phase == corev1.PodRunning {
			return &pods.Items[i]
		}
	}
	t.Fatalf("VMI %s has no running virt-launcher pod among %d", vmi.Name, len(pods.Items))
	return nil
}

// checkStorageFlow checks that CDI made the Machine's root disk: a
// host-assisted clone of the image cache DataVolume, itself imported.
func (s *suite) checkStorageFlow(t *testing.T, machine string) {
	t.Helper()
	ctx := t.Context()
	root := &cdicorev1beta1.DataVolume{}
	if err := s.infra.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: infraNamespace, Name: machine}, root); err != nil {
		t.Fatal(err)
	}
	if root.Status.Phase != cdicorev1beta1.Succeeded || root.Annotations["cdi.kubevirt.io/cloneType"] != "copy" || root.Spec.Source.PVC == nil {
		t.Fatalf("root DataVolume: phase %q, clone type %q, source %+v; want a Succeeded host-assisted clone",
			root.Status.Phase, root.Annotations["cdi.kubevirt.io/cloneType"], root.Spec.Source)
	}
	cache := &cdicorev1beta1.DataVolume{}
	key := ctrlruntimeclient.ObjectKey{Namespace: root.Spec.Source.PVC.Namespace, Name: root.Spec.Source.PVC.Name}
	if err := s.infra.Client.Get(ctx, key, cache); err != nil {
		t.Fatal(err)
	}
	if cache.Status.Phase != cdicorev1beta1.Succeeded || cache.Spec.Source.HTTP == nil {
		t.Errorf("image cache DataVolume %s: phase %q, source %+v; want a Succeeded HTTP import", key, cache.Status.Phase, cache.Spec.Source)
	}
	events := &corev1.EventList{}
	if err := s.infra.Client.List(ctx, events, ctrlruntimeclient.InNamespace(infraNamespace)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct{ object, reason string }{
		{cache.Name, "ImportSucceeded"}, {root.Name, "CloneSucceeded"},
	} {
		if !slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
			return e.InvolvedObject.Name == want.object && e.Reason == want.reason
		}) {
			t.Errorf("no %s event of CDI for %s", want.reason, want.object)
		}
	}
}
