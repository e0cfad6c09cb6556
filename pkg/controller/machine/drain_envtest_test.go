package machine

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// TestDrainHonoursPodDisruptionBudgets drains a Node on a real API server
// whose kube-controller-manager runs the disruption controller: the pod a
// PodDisruptionBudget protects stays while the budget allows no
// disruption, and goes once it does; DaemonSet, static and finished pods
// stay; a pod within its grace period counts as pending, one past it as
// gone; pods of other Nodes are left alone.
func TestDrainHonoursPodDisruptionBudgets(t *testing.T) {
	env := envtest.Start(t, envtest.WithControllerManager())
	ctx := t.Context()
	c := env.Client
	ns := env.CreateNamespace(t, "drain")
	for _, name := range []string{"n", "other"} {
		if err := c.Create(ctx, readyNode(name)); err != nil {
			t.Fatal(err)
		}
	}
	db := func(p *corev1.Pod) { p.Labels = map[string]string{"app": "db"} }
	// A real DaemonSet that fits no Node, so that its controller makes no
	// pod and the garbage collector keeps the one that names it as owner.
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ds"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ds"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "ds"}},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"drain-test/none": "none"},
					Containers:   []corev1.Container{{Name: "c", Image: "example.com/ds"}},
				},
			},
		},
	}
	if err := c.Create(ctx, ds); err != nil {
		t.Fatal(err)
	}
	daemon := func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID, Controller: ptr.To(true)}}
	}
	mirror := func(p *corev1.Pod) { p.Annotations = map[string]string{annotationMirrorPod: "x"} }
	for _, p := range []*corev1.Pod{
		testPod("app", "n"), testPod("protected", "n", db), testPod("daemon", "n", daemon), testPod("static", "n", mirror),
		testPod("finished", "n"), testPod("stopping", "n"), testPod("overdue", "n"), testPod("elsewhere", "other"),
	} {
		createRunningPod(t, c, ns, p)
	}
	setPhase(t, c, ns, "finished", corev1.PodSucceeded)
	// Deleted with a grace period the drain is within, and with one it is
	// past; a finalizer keeps both, as a kubelet that has not confirmed.
	deleteWithGrace(t, c, ns, "stopping", 3600)
	deleteWithGrace(t, c, ns, "overdue", 1)

	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}},
	}
	if err := c.Create(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	waitForBudget(t, c, pdb, 0)
	time.Sleep(1500 * time.Millisecond) // past the grace period of "overdue"
	state, err := drain(ctx, c, c, readyNode("n"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(drainState{pending: 3, blocked: 1}, state, cmp.AllowUnexported(drainState{})); diff != "" {
		t.Errorf("state with the budget exhausted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"daemon", "elsewhere", "finished", "protected", "static"}, podNames(t, c, ns)); diff != "" {
		t.Errorf("pods not being deleted (-want +got):\n%s", diff)
	}

	base := pdb.DeepCopy()
	pdb.Spec.MinAvailable = ptr.To(intstr.FromInt32(0))
	if err := c.Patch(ctx, pdb, ctrlruntimeclient.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	waitForBudget(t, c, pdb, 1)
	if state, err = drain(ctx, c, c, readyNode("n"), time.Now()); err != nil {
		t.Fatal(err)
	}
	if state.blocked != 0 || slices.Contains(podNames(t, c, ns), "protected") {
		t.Errorf("with the budget allowing it: state %+v, pods %v; want the protected pod evicted", state, podNames(t, c, ns))
	}
}

// createRunningPod creates a pod, with a finalizer, and reports it Running
// and Ready, as its kubelet would: evictions of pods that do not run are
// not judged by budgets.
func createRunningPod(t *testing.T, c ctrlruntimeclient.Client, ns string, p *corev1.Pod) {
	t.Helper()
	p.Namespace = ns
	p.Finalizers = []string{"test.kkp-kubevirt.io/kubelet"}
	p.Spec.Containers = []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}
	if err := c.Create(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	if err := c.Status().Update(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		base := p.DeepCopy()
		p.Finalizers = nil
		_ = c.Patch(context.Background(), p, ctrlruntimeclient.MergeFrom(base))
	})
}

// setPhase sets the phase of a pod.
func setPhase(t *testing.T, c ctrlruntimeclient.Client, ns, name string, phase corev1.PodPhase) {
	t.Helper()
	p := &corev1.Pod{}
	if err := c.Get(t.Context(), ctrlruntimeclient.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = phase
	if err := c.Status().Update(t.Context(), p); err != nil {
		t.Fatal(err)
	}
}

// deleteWithGrace deletes a pod with a grace period in seconds.
func deleteWithGrace(t *testing.T, c ctrlruntimeclient.Client, ns, name string, seconds int64) {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := c.Delete(t.Context(), p, ctrlruntimeclient.GracePeriodSeconds(seconds)); err != nil {
		t.Fatal(err)
	}
}

// waitForBudget waits until the disruption controller computed the
// budget's allowed disruptions for its current generation.
func waitForBudget(t *testing.T, c ctrlruntimeclient.Client, pdb *policyv1.PodDisruptionBudget, allowed int32) {
	t.Helper()
	poll.Until(t, 30*time.Second, func() error {
		got := &policyv1.PodDisruptionBudget{}
		if err := c.Get(t.Context(), ctrlruntimeclient.ObjectKeyFromObject(pdb), got); err != nil {
			return err
		}
		if got.Status.ObservedGeneration != got.Generation || got.Status.DisruptionsAllowed != allowed {
			return fmt.Errorf("PodDisruptionBudget %s: generation %d observed %d, %d disruptions allowed, want %d",
				got.Name, got.Generation, got.Status.ObservedGeneration, got.Status.DisruptionsAllowed, allowed)
		}
		return nil
	})
}

// podNames lists the names of the pods of ns that are not being deleted,
// sorted.
func podNames(t *testing.T, c ctrlruntimeclient.Client, ns string) []string {
	t.Helper()
	list := &corev1.PodList{}
	if err := c.List(t.Context(), list, ctrlruntimeclient.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p.Name)
		}
	}
	slices.Sort(out)
	return out
}
