package machine

import (
	"cmp"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

func TestReconcileStoppedInstance(t *testing.T) {
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	const grace = 5 * time.Minute
	// step is one reconcile: the instance status then, and the time.
	type step struct {
		status cloudprovider.InstanceStatus
		at     time.Duration
	}
	for _, tc := range []struct {
		name        string
		owned       bool
		linked      bool
		grace       time.Duration
		steps       []step
		wantDeleted bool
		wantRequeue time.Duration
		wantEvent   string
	}{
		{name: "running", owned: true, steps: []step{{cloudprovider.StatusRunning, 0}, {cloudprovider.StatusRunning, time.Hour}}},
		{name: "stopped within the grace", owned: true, steps: []step{{cloudprovider.StatusStopped, 0}, {cloudprovider.StatusStopped, 2 * time.Minute}}, wantRequeue: 3 * time.Minute},
		{name: "stopped past the grace", owned: true, steps: []step{{cloudprovider.StatusStopped, 0}, {cloudprovider.StatusStopped, 6 * time.Minute}},
			wantDeleted: true, wantEvent: "Warning InstanceStopped"},
		{name: "restarted in between", owned: true, steps: []step{{cloudprovider.StatusStopped, 0}, {cloudprovider.StatusRunning, 2 * time.Minute}, {cloudprovider.StatusStopped, 6 * time.Minute}},
			wantRequeue: grace},
		{name: "unknown past the grace", owned: true, steps: []step{{cloudprovider.StatusUnknown, 0}, {cloudprovider.StatusUnknown, 6 * time.Minute}},
			wantDeleted: true, wantEvent: "Warning InstanceStopped"},
		{name: "starting for the first time", owned: true, steps: []step{{cloudprovider.StatusCreating, 0}, {cloudprovider.StatusCreating, time.Hour}}},
		{name: "starting again after having a Node", owned: true, linked: true, steps: []step{{cloudprovider.StatusCreating, 0}, {cloudprovider.StatusCreating, 6 * time.Minute}},
			wantDeleted: true, wantEvent: "Warning InstanceStopped"},
		// A guest that crashes at every start: KubeVirt deletes each failed
		// VMI and starts the next, and none of it ends the down period.
		{name: "crash loop through deleting VMIs", owned: true, linked: true, steps: []step{
			{cloudprovider.StatusStopped, 0}, {cloudprovider.StatusDeleting, time.Minute}, {cloudprovider.StatusCreating, 2 * time.Minute},
			{cloudprovider.StatusStopped, 3 * time.Minute}, {cloudprovider.StatusDeleting, 4 * time.Minute}, {cloudprovider.StatusStopped, 6 * time.Minute},
		}, wantDeleted: true, wantEvent: "Warning InstanceStopped"},
		{name: "standalone Machine is kept", steps: []step{{cloudprovider.StatusStopped, 0}, {cloudprovider.StatusStopped, 6 * time.Minute}},
			wantRequeue: grace, wantEvent: "Warning InstanceStopped"},
		{name: "disabled", owned: true, grace: -1, steps: []step{{cloudprovider.StatusStopped, 0}, {cloudprovider.StatusStopped, time.Hour}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMachine()
			m.Finalizers = []string{FinalizerDelete, FinalizerNodeDelete}
			objs := []ctrlruntimeclient.Object{m}
			if tc.owned {
				m.OwnerReferences = []metav1.OwnerReference{ownerRef("MachineSet", "ms", "ms-uid")}
			}
			if tc.linked {
				node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid"}}
				m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: node.Name, UID: node.UID}
				objs = append(objs, node)
			}
			f := newFixture(t, objs...)
			inst := &fakeInstance{name: "m-1", addresses: map[string]corev1.NodeAddressType{"10.0.0.1": corev1.NodeInternalIP}}
			f.provider.instances["m-1"] = inst
			f.r.stoppedGrace = cmp.Or(tc.grace, grace)
			var requeue time.Duration
			for _, st := range tc.steps {
				inst.status = st.status
				f.r.now = func() time.Time { return start.Add(st.at) }
				res, err := f.reconcile()
				if err != nil {
					t.Fatal(err)
				}
				requeue = res.RequeueAfter
			}
			if requeue != tc.wantRequeue {
				t.Errorf("requeue after %s, want %s", requeue, tc.wantRequeue)
			}
			got := &clusterv1alpha1.Machine{}
			err := f.client.Get(t.Context(), f.key, got)
			if err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
			if deleted := err != nil || got.DeletionTimestamp != nil; deleted != tc.wantDeleted {
				t.Errorf("deleted = %v, want %v", deleted, tc.wantDeleted)
			}
			var gotEvents []string
			for _, e := range f.events() {
				if strings.HasPrefix(e, "Warning") {
					gotEvents = append(gotEvents, strings.Join(strings.Fields(e)[:2], " "))
				}
			}
			var wantEvents []string
			if tc.wantEvent != "" {
				wantEvents = []string{tc.wantEvent}
			}
			if diff := gocmp.Diff(wantEvents, gotEvents); diff != "" {
				t.Errorf("Warning events (-want +got):\n%s", diff)
			}
		})
	}
}

// The down time survives a controller restart: it is read back from the
// Machine, and removed once the instance runs again.
func TestStoppedGraceSurvivesRestart(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name        string
		annotation  string
		status      cloudprovider.InstanceStatus
		wantDeleted bool
		wantAnno    string
	}{
		{name: "down since before the restart, past the grace", annotation: "2026-01-01T11:54:00Z", status: cloudprovider.StatusStopped, wantDeleted: true},
		{name: "down since before the restart, within the grace", annotation: "2026-01-01T11:58:00Z", status: cloudprovider.StatusStopped, wantAnno: "2026-01-01T11:58:00Z"},
		{name: "an unreadable time starts a new period", annotation: "yesterday", status: cloudprovider.StatusStopped, wantAnno: "2026-01-01T12:00:00Z"},
		{name: "running again clears it", annotation: "2026-01-01T11:54:00Z", status: cloudprovider.StatusRunning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMachine()
			m.Finalizers = []string{FinalizerDelete, FinalizerNodeDelete}
			m.OwnerReferences = []metav1.OwnerReference{ownerRef("MachineSet", "ms", "ms-uid")}
			m.Annotations = map[string]string{AnnotationDownSince: tc.annotation}
			f := newFixture(t, m)
			f.provider.instances["m-1"] = &fakeInstance{name: "m-1", status: tc.status, addresses: map[string]corev1.NodeAddressType{"10.0.0.1": corev1.NodeInternalIP}}
			f.r.stoppedGrace = 5 * time.Minute
			f.r.now = func() time.Time { return now }
			if _, err := f.reconcile(); err != nil {
				t.Fatal(err)
			}
			var got clusterv1alpha1.Machine
			err := f.client.Get(t.Context(), f.key, &got)
			if deleted := apierrors.IsNotFound(err) || (err == nil && got.DeletionTimestamp != nil); deleted != tc.wantDeleted {
				t.Fatalf("deleted = %t (err %v), want %t", deleted, err, tc.wantDeleted)
			}
			if tc.wantDeleted {
				return
			}
			if diff := gocmp.Diff(tc.wantAnno, got.Annotations[AnnotationDownSince]); diff != "" {
				t.Errorf("%s (-want +got):\n%s", AnnotationDownSince, diff)
			}
		})
	}
}
