package machinedeployment

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8c.io/machine-controller/sdk/apis/cluster/common"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

var mdKey = types.NamespacedName{Namespace: "ns", Name: "md"}

func newTestClient(t *testing.T, objs ...ctrlruntimeclient.Object) ctrlruntimeclient.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := clusterv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&clusterv1alpha1.MachineSet{}, &clusterv1alpha1.MachineDeployment{}).Build()
}

func testDeployment(replicas int32, providerSpec string, surge, unavailable int) *clusterv1alpha1.MachineDeployment {
	labels := map[string]string{"pool": "a"}
	return &clusterv1alpha1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: mdKey.Name, Namespace: mdKey.Namespace, UID: "md-uid"},
		Spec: clusterv1alpha1.MachineDeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: metav1.LabelSelector{MatchLabels: labels},
			Template: *template(providerSpec, labels),
			Strategy: &clusterv1alpha1.MachineDeploymentStrategy{
				Type: common.RollingUpdateMachineDeploymentStrategyType,
				RollingUpdate: &clusterv1alpha1.MachineRollingUpdateDeployment{
					MaxSurge: ptr.To(intstr.FromInt(surge)), MaxUnavailable: ptr.To(intstr.FromInt(unavailable)),
				},
			},
			RevisionHistoryLimit:    ptr.To[int32](0),
			ProgressDeadlineSeconds: ptr.To[int32](600),
		},
	}
}

func reconcileOnce(t *testing.T, r *reconciler) {
	t.Helper()
	if _, err := r.Reconcile(t.Context(), reconcile.Request{NamespacedName: mdKey}); err != nil {
		t.Fatal(err)
	}
}

func listSets(t *testing.T, c ctrlruntimeclient.Client) []clusterv1alpha1.MachineSet {
	t.Helper()
	list := &clusterv1alpha1.MachineSetList{}
	if err := c.List(t.Context(), list); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(list.Items, func(a, b clusterv1alpha1.MachineSet) int {
		return int(revisionOf(a.Annotations) - revisionOf(b.Annotations))
	})
	return list.Items
}

// settle plays the MachineSet controller: every MachineSet reports its
// spec.replicas as existing and ready. With available, all of them are
// available; without, only as many as before (new Machines are not yet).
func settle(t *testing.T, c ctrlruntimeclient.Client, available bool) {
	t.Helper()
	for _, ms := range listSets(t, c) {
		base := ms.DeepCopy()
		n := ptr.Deref(ms.Spec.Replicas, 1)
		avail := n
		if !available {
			avail = min(ms.Status.AvailableReplicas, n)
		}
		ms.Status = clusterv1alpha1.MachineSetStatus{
			Replicas: n, FullyLabeledReplicas: n, ReadyReplicas: n, AvailableReplicas: avail, ObservedGeneration: ms.Generation,
		}
		if err := c.Status().Patch(t.Context(), &ms, ctrlruntimeclient.MergeFrom(base)); err != nil {
			t.Fatal(err)
		}
	}
}

// counts returns the spec.replicas and available replicas of all
// MachineSets.
func counts(t *testing.T, c ctrlruntimeclient.Client) (total, available int32) {
	t.Helper()
	for _, ms := range listSets(t, c) {
		total += ptr.Deref(ms.Spec.Replicas, 1)
		available += ms.Status.AvailableReplicas
	}
	return total, available
}

func getDeployment(t *testing.T, c ctrlruntimeclient.Client) *clusterv1alpha1.MachineDeployment {
	t.Helper()
	md := &clusterv1alpha1.MachineDeployment{}
	if err := c.Get(t.Context(), mdKey, md); err != nil {
		t.Fatal(err)
	}
	return md
}

func TestReconcileCreatesTheMachineSet(t *testing.T) {
	md := testDeployment(3, `{"image":"a"}`, 1, 0)
	c := newTestClient(t, md)
	recorder := events.NewFakeRecorder(10)
	r := newReconciler(c, recorder)
	reconcileOnce(t, r)

	sets := listSets(t, c)
	if len(sets) != 1 {
		t.Fatalf("%d MachineSets, want 1", len(sets))
	}
	ms := sets[0]
	hash := ms.Labels[LabelTemplateHash]
	got := map[string]string{
		"name": ms.Name, "selector": ms.Spec.Selector.MatchLabels[LabelTemplateHash], "template": ms.Spec.Template.Labels[LabelTemplateHash],
		"pool": ms.Spec.Template.Labels["pool"], "owner": string(metav1.GetControllerOf(&ms).UID),
		"revision": ms.Annotations[common.RevisionAnnotation], "desired": ms.Annotations[common.DesiredReplicasAnnotation],
		"max": ms.Annotations[common.MaxReplicasAnnotation],
	}
	want := map[string]string{
		"name": "md-" + hash, "selector": hash, "template": hash, "pool": "a", "owner": "md-uid",
		"revision": "1", "desired": "3", "max": "4",
	}
	if hash == "" {
		t.Error("MachineSet without template hash label")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MachineSet (-want +got):\n%s", diff)
	}
	if n := ptr.Deref(ms.Spec.Replicas, 0); n != 3 {
		t.Errorf("replicas = %d, want 3", n)
	}
	if rev := getDeployment(t, c).Annotations[common.RevisionAnnotation]; rev != "1" {
		t.Errorf("MachineDeployment revision = %q, want 1", rev)
	}
	if e := <-recorder.Events; !strings.Contains(e, "SuccessfulCreate") {
		t.Errorf("event %q, want SuccessfulCreate", e)
	}

	// Until the MachineSet controller reports, nothing more happens.
	reconcileOnce(t, r)
	if n := len(listSets(t, c)); n != 1 {
		t.Errorf("%d MachineSets after a second reconcile, want 1", n)
	}
	settle(t, c, true)
	reconcileOnce(t, r)
	md = getDeployment(t, c)
	wantStatus := clusterv1alpha1.MachineDeploymentStatus{Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3}
	if diff := cmp.Diff(wantStatus, md.Status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if p := md.Annotations[AnnotationProgress]; p != ReasonNewMachineSetAvailable {
		t.Errorf("progress = %q, want %s", p, ReasonNewMachineSetAvailable)
	}
}

func TestReconcileRollsOut(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		replicas               int32
		surge, unavailable     int
		maxTotal, minAvailable int32
	}{
		{name: "surge 1", replicas: 3, surge: 1, maxTotal: 4, minAvailable: 3},
		{name: "unavailable 1", replicas: 3, unavailable: 1, maxTotal: 3, minAvailable: 2},
		{name: "surge 2 unavailable 2", replicas: 5, surge: 2, unavailable: 2, maxTotal: 7, minAvailable: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := testDeployment(tc.replicas, `{"image":"a"}`, tc.surge, tc.unavailable)
			c := newTestClient(t, md)
			r := newReconciler(c, events.NewFakeRecorder(100))
			reconcileOnce(t, r)
			settle(t, c, true)
			reconcileOnce(t, r)
			oldName := listSets(t, c)[0].Name

			md = getDeployment(t, c)
			md.Spec.Template = *template(`{"image":"b"}`, map[string]string{"pool": "a"})
			if err := c.Update(t.Context(), md); err != nil {
				t.Fatal(err)
			}
			check := func(step int) {
				t.Helper()
				total, available := counts(t, c)
				if total > tc.maxTotal {
					t.Fatalf("step %d: %d replicas, more than %d", step, total, tc.maxTotal)
				}
				if available < tc.minAvailable {
					t.Fatalf("step %d: %d available, fewer than %d", step, available, tc.minAvailable)
				}
			}
			for step := 0; ; step++ {
				if step == 50 {
					t.Fatalf("rollout did not finish: %v", names(listSets(t, c)))
				}
				// New Machines come up unavailable, and the controller
				// looks at them before they become available.
				reconcileOnce(t, r)
				settle(t, c, false)
				check(step)
				reconcileOnce(t, r)
				settle(t, c, false)
				check(step)
				settle(t, c, true)
				if getDeployment(t, c).Annotations[AnnotationProgress] == ReasonNewMachineSetAvailable {
					break
				}
			}
			sets := listSets(t, c)
			if len(sets) != 1 || sets[0].Name == oldName {
				t.Fatalf("MachineSets after the rollout: %v, want only a new one (history limit 0)", names(sets))
			}
			if got := sets[0].Annotations[common.RevisionAnnotation]; got != "2" {
				t.Errorf("new MachineSet revision %q, want 2", got)
			}
			if n := ptr.Deref(sets[0].Spec.Replicas, 0); n != tc.replicas {
				t.Errorf("new MachineSet has %d replicas, want %d", n, tc.replicas)
			}
			if got := getDeployment(t, c).Annotations[common.RevisionAnnotation]; got != "2" {
				t.Errorf("MachineDeployment revision %q, want 2", got)
			}
		})
	}
}

func names(sets []clusterv1alpha1.MachineSet) []string {
	out := make([]string, 0, len(sets))
	for _, ms := range sets {
		out = append(out, ms.Name)
	}
	return out
}

func TestReconcileRefusesInvalidSpecs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		modify func(*clusterv1alpha1.MachineDeployment)
	}{
		{name: "empty selector", modify: func(md *clusterv1alpha1.MachineDeployment) { md.Spec.Selector = metav1.LabelSelector{} }},
		{name: "selector not matching the template", modify: func(md *clusterv1alpha1.MachineDeployment) {
			md.Spec.Selector.MatchLabels = map[string]string{"pool": "other"}
		}},
		{name: "unknown strategy", modify: func(md *clusterv1alpha1.MachineDeployment) { md.Spec.Strategy.Type = "Recreate" }},
		{name: "negative maxSurge", modify: func(md *clusterv1alpha1.MachineDeployment) {
			md.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt(-1))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := testDeployment(3, `{"image":"a"}`, 1, 0)
			tc.modify(md)
			c := newTestClient(t, md)
			r := newReconciler(c, events.NewFakeRecorder(10))
			_, err := r.Reconcile(t.Context(), reconcile.Request{NamespacedName: mdKey})
			if !errors.Is(err, reconcile.TerminalError(nil)) {
				t.Errorf("err = %v, want a terminal error", err)
			}
			if n := len(listSets(t, c)); n != 0 {
				t.Errorf("%d MachineSets created", n)
			}
		})
	}
}

func TestReconcileAdoptsAnOrphan(t *testing.T) {
	md := testDeployment(2, `{"image":"a"}`, 1, 0)
	hash, err := templateHash(&md.Spec.Template)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"pool": "a", LabelTemplateHash: hash}
	orphan := &clusterv1alpha1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: "ns", Labels: labels},
		Spec: clusterv1alpha1.MachineSetSpec{
			Replicas: ptr.To[int32](2),
			Selector: metav1.LabelSelector{MatchLabels: labels},
			Template: *template(`{"image":"a"}`, labels),
		},
	}
	foreign := orphan.DeepCopy()
	foreign.Name, foreign.Labels = "foreign", map[string]string{"pool": "b"}
	c := newTestClient(t, md, orphan, foreign)
	r := newReconciler(c, events.NewFakeRecorder(100))
	settle(t, c, true)
	reconcileOnce(t, r)
	got := map[string]string{}
	for _, ms := range listSets(t, c) {
		if ref := metav1.GetControllerOf(&ms); ref != nil {
			got[ms.Name] = string(ref.UID)
		} else {
			got[ms.Name] = ""
		}
	}
	if diff := cmp.Diff(map[string]string{"orphan": "md-uid", "foreign": ""}, got); diff != "" {
		t.Errorf("controllers (-want +got):\n%s", diff)
	}
	if rev := getDeployment(t, c).Annotations[common.RevisionAnnotation]; rev != "1" {
		t.Errorf("revision = %q after adopting the template's MachineSet, want 1", rev)
	}
}
