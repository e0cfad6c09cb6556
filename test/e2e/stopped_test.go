package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/machine"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/simulator"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// stoppedGrace is the suite's grace for stopped instances. It is longer
// than any subtest: every restart of a VMI (a stop, an evacuation) counts
// as down until the new VMI runs, and with a grace shorter than a restart
// can take on a loaded machine, the controller replaced Machines that the
// evacuation subtests then waited for in vain. testStoppedVM ages the
// Machine's down-since record instead of waiting out the grace.
const stoppedGrace = 30 * time.Minute

// testStoppedVM stops a VMI twice: KubeVirt (the simulator) restarts it the
// first time and the Machine stays; the second time it stays down and the
// Machine is replaced.
func (s *suite) testStoppedVM(t *testing.T) {
	ctx := t.Context()
	c := s.user.Client
	labels := map[string]string{"name": "restarts"}
	ms := &clusterv1alpha1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Name: "restarts", Namespace: machineNamespace},
		Spec: clusterv1alpha1.MachineSetSpec{
			Replicas: ptr.To[int32](1),
			Selector: metav1.LabelSelector{MatchLabels: labels},
			Template: clusterv1alpha1.MachineTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: machineSpec(providerSpec)},
		},
	}
	if err := c.Create(ctx, ms); err != nil {
		t.Fatal(err)
	}
	m := s.waitForReplicas(t, ms, 1)[0]
	key := ctrlruntimeclient.ObjectKey{Namespace: infraNamespace, Name: m.Name}
	vmi := &kubevirtcorev1.VirtualMachineInstance{}
	if err := s.infra.Client.Get(ctx, key, vmi); err != nil {
		t.Fatal(err)
	}

	if err := simulator.StopVMI(ctx, s.infra.Client, infraNamespace, m.Name, true); err != nil {
		t.Fatal(err)
	}
	waitFor(t, timeout, "the VMI restarted", func() (bool, string) {
		got := &kubevirtcorev1.VirtualMachineInstance{}
		err := s.infra.Client.Get(ctx, key, got)
		return err == nil && got.UID != vmi.UID && got.Status.Phase == kubevirtcorev1.Running, fmt.Sprintf("phase=%s err=%v", got.Status.Phase, err)
	})
	// Running again ends the down period: the Machine keeps no record of
	// it that a later check could count.
	waitFor(t, timeout, "the down period ended", func() (bool, string) {
		got := &clusterv1alpha1.Machine{}
		if err := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(&m), got); err != nil {
			return false, err.Error()
		}
		since, down := got.Annotations[machine.AnnotationDownSince]
		return !down && got.UID == m.UID, fmt.Sprintf("uid=%s down since %q", got.UID, since)
	})

	if err := simulator.StopVMI(ctx, s.infra.Client, infraNamespace, m.Name, false); err != nil {
		t.Fatal(err)
	}
	// Once the controller counts the VM down, the grace is made to have
	// passed: the record says the VM went down before it.
	s.ageDownSince(t, m.Name)
	waitFor(t, timeout, "the stopped Machine replaced", func() (bool, string) {
		err := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(&m), &clusterv1alpha1.Machine{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	if got := s.waitForReplicas(t, ms, 1); got[0].UID == m.UID {
		t.Fatalf("Machine %s was not replaced", m.Name)
	}
	events := &eventsv1.EventList{}
	if err := c.List(ctx, events, ctrlruntimeclient.InNamespace(machineNamespace)); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(events.Items, func(e eventsv1.Event) bool {
		return e.Regarding.UID == m.UID && e.Type == corev1.EventTypeWarning && e.Reason == "InstanceStopped"
	}) {
		t.Errorf("no InstanceStopped Warning event for Machine %s", m.Name)
	}

	s.deleteAndWait(t, ms)
}

// ageDownSince waits until the controller records since when a Machine's
// instance is down, then moves that time back past the grace.
func (s *suite) ageDownSince(t *testing.T, name string) {
	t.Helper()
	c := s.user.Client
	key := ctrlruntimeclient.ObjectKey{Namespace: machineNamespace, Name: name}
	waitFor(t, timeout, "the instance counted down", func() (bool, string) {
		got := &clusterv1alpha1.Machine{}
		if err := c.Get(t.Context(), key, got); err != nil {
			return false, err.Error()
		}
		if _, down := got.Annotations[machine.AnnotationDownSince]; !down {
			return false, fmt.Sprintf("annotations %v", got.Annotations)
		}
		base := got.DeepCopy()
		got.Annotations[machine.AnnotationDownSince] = time.Now().Add(-stoppedGrace - time.Minute).UTC().Format(time.RFC3339)
		if err := c.Patch(t.Context(), got, ctrlruntimeclient.MergeFromWithOptions(base, ctrlruntimeclient.MergeFromWithOptimisticLock{})); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
}
