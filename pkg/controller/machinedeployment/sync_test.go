package machinedeployment

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8c.io/machine-controller/sdk/apis/cluster/common"

	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
)

// replicasByName returns the spec.replicas of every MachineSet.
func replicasByName(t *testing.T, r *reconciler) map[string]int32 {
	t.Helper()
	out := map[string]int32{}
	for _, ms := range listSets(t, r.client) {
		out[ms.Name] = ptr.Deref(ms.Spec.Replicas, 1)
	}
	return out
}

func TestReconcilePausedScalesWithoutRolling(t *testing.T) {
	md := testDeployment(3, `{"image":"a"}`, 1, 0)
	c := newTestClient(t, md)
	r := newReconciler(c, events.NewFakeRecorder(100))
	reconcileOnce(t, r)
	settle(t, c, true)
	reconcileOnce(t, r)
	name := listSets(t, c)[0].Name

	md = getDeployment(t, c)
	md.Spec.Paused = true
	md.Spec.Replicas = ptr.To[int32](5)
	md.Spec.Template = *template(`{"image":"b"}`, map[string]string{"pool": "a"})
	if err := c.Update(t.Context(), md); err != nil {
		t.Fatal(err)
	}
	reconcileOnce(t, r)
	if diff := cmp.Diff(map[string]int32{name: 5}, replicasByName(t, r)); diff != "" {
		t.Errorf("paused: MachineSets (-want +got):\n%s", diff)
	}
	if p := getDeployment(t, c).Annotations[AnnotationProgress]; p != ReasonPaused {
		t.Errorf("progress = %q, want %s", p, ReasonPaused)
	}

	// Resumed, the rollout starts.
	settle(t, c, true)
	md = getDeployment(t, c)
	md.Spec.Paused = false
	if err := c.Update(t.Context(), md); err != nil {
		t.Fatal(err)
	}
	reconcileOnce(t, r)
	got := replicasByName(t, r)
	if len(got) != 2 || got[name] != 5 {
		t.Errorf("resumed: MachineSets %v, want the old one with 5 and a new one", got)
	}
}

func TestReconcileScalesACompleteDeployment(t *testing.T) {
	md := testDeployment(3, `{"image":"a"}`, 1, 0)
	c := newTestClient(t, md)
	r := newReconciler(c, events.NewFakeRecorder(100))
	reconcileOnce(t, r)
	settle(t, c, true)
	name := listSets(t, c)[0].Name
	for _, replicas := range []int32{5, 1, 0, 2} {
		md = getDeployment(t, c)
		md.Spec.Replicas = ptr.To(replicas)
		if err := c.Update(t.Context(), md); err != nil {
			t.Fatal(err)
		}
		reconcileOnce(t, r)
		settle(t, c, true)
		if diff := cmp.Diff(map[string]int32{name: replicas}, replicasByName(t, r)); diff != "" {
			t.Errorf("scaled to %d: MachineSets (-want +got):\n%s", replicas, diff)
		}
	}
}

func TestReconcileRollsBack(t *testing.T) {
	md := testDeployment(2, `{"image":"a"}`, 1, 0)
	md.Spec.RevisionHistoryLimit = ptr.To[int32](5)
	c := newTestClient(t, md)
	r := newReconciler(c, events.NewFakeRecorder(100))
	roll := func(image string) {
		t.Helper()
		md := getDeployment(t, c)
		md.Spec.Template = *template(`{"image":"`+image+`"}`, map[string]string{"pool": "a"})
		if err := c.Update(t.Context(), md); err != nil {
			t.Fatal(err)
		}
		for range 20 {
			reconcileOnce(t, r)
			settle(t, c, true)
		}
	}
	roll("a")
	roll("b")
	roll("a")
	got := map[string]string{}
	for _, ms := range listSets(t, c) {
		image := string(ms.Spec.Template.Spec.ProviderSpec.Value.Raw)
		got[image] = fmt.Sprintf("revision=%s history=%s replicas=%d", ms.Annotations[common.RevisionAnnotation],
			ms.Annotations[common.RevisionHistoryAnnotation], ptr.Deref(ms.Spec.Replicas, 1))
	}
	want := map[string]string{
		`{"image":"a"}`: "revision=3 history=1 replicas=2",
		`{"image":"b"}`: "revision=2 history= replicas=0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MachineSets by template (-want +got):\n%s", diff)
	}
	if rev := getDeployment(t, c).Annotations[common.RevisionAnnotation]; rev != "3" {
		t.Errorf("MachineDeployment revision %q, want 3", rev)
	}
}
