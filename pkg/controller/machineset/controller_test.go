package machineset

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

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
		WithStatusSubresource(&clusterv1alpha1.MachineSet{}, &clusterv1alpha1.Machine{}).Build()
}

func testMachineSet(replicas int32) *clusterv1alpha1.MachineSet {
	labels := map[string]string{"pool": "a"}
	return &clusterv1alpha1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ms", Namespace: "ns", UID: "ms-uid"},
		Spec: clusterv1alpha1.MachineSetSpec{
			Replicas:     ptr.To(replicas),
			DeletePolicy: string(clusterv1alpha1.OldestMachineSetDeletePolicy),
			Selector:     metav1.LabelSelector{MatchLabels: labels},
			Template:     clusterv1alpha1.MachineTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}},
		},
	}
}

func listMachines(t *testing.T, c ctrlruntimeclient.Client) []clusterv1alpha1.Machine {
	t.Helper()
	list := &clusterv1alpha1.MachineList{}
	if err := c.List(t.Context(), list); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func TestReconcileScales(t *testing.T) {
	ms := testMachineSet(3)
	owned := func(name string, age int) *clusterv1alpha1.Machine {
		return testMachine(name, age, func(m *clusterv1alpha1.Machine) {
			m.Namespace, m.Labels = "ns", map[string]string{"pool": "a"}
			m.OwnerReferences = []metav1.OwnerReference{controllerRef(ms)}
		})
	}
	orphan := testMachine("orphan", 9, func(m *clusterv1alpha1.Machine) { m.Namespace, m.Labels = "ns", map[string]string{"pool": "a"} })
	foreign := testMachine("foreign", 0, func(m *clusterv1alpha1.Machine) { m.Namespace, m.Labels = "ns", map[string]string{"pool": "b"} })
	ready := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "m1"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	for _, tc := range []struct {
		name      string
		replicas  int32
		objs      []ctrlruntimeclient.Object
		wantCount int
		wantKept  []string
		wantReady int32
	}{
		{name: "scale up from zero", replicas: 3, wantCount: 3},
		{name: "adopt an orphan, create the rest", replicas: 2, objs: []ctrlruntimeclient.Object{orphan, foreign}, wantCount: 2, wantKept: []string{"orphan"}},
		{
			name: "scale down oldest first", replicas: 1,
			objs:      []ctrlruntimeclient.Object{owned("m1", 3), owned("m2", 1), owned("m3", 2), ready},
			wantCount: 1, wantKept: []string{"m1"}, wantReady: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := testMachineSet(tc.replicas)
			c := newTestClient(t, append(tc.objs, set)...)
			r := newReconciler(c, nil, 0)
			req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "ms"}}
			if _, err := r.Reconcile(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			all := listMachines(t, c)
			var mine []string
			for _, m := range all {
				if ref := metav1.GetControllerOf(&m); ref != nil && ref.UID == set.UID {
					mine = append(mine, m.Name)
				}
			}
			if len(mine) != tc.wantCount {
				t.Errorf("MachineSet owns %v, want %d Machines", mine, tc.wantCount)
			}
			for _, name := range tc.wantKept {
				if !slices.Contains(mine, name) {
					t.Errorf("Machine %s not kept: %v", name, mine)
				}
			}
			// A second reconcile, on a cache that shows the first one's changes,
			// changes no Machine and reports the counts in the status.
			if _, err := r.Reconcile(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			if n := len(listMachines(t, c)); n != len(all) {
				t.Errorf("second reconcile changed the number of Machines from %d to %d", len(all), n)
			}
			got := &clusterv1alpha1.MachineSet{}
			if err := c.Get(t.Context(), req.NamespacedName, got); err != nil {
				t.Fatal(err)
			}
			want := clusterv1alpha1.MachineSetStatus{
				Replicas: int32(tc.wantCount), FullyLabeledReplicas: int32(tc.wantCount),
				ReadyReplicas: tc.wantReady, AvailableReplicas: tc.wantReady,
			}
			if diff := cmp.Diff(want, got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReconcileRejectsSelectorNotMatchingTemplate(t *testing.T) {
	set := testMachineSet(2)
	set.Spec.Template.Labels = map[string]string{"pool": "other"}
	c := newTestClient(t, set)
	r := newReconciler(c, events.NewFakeRecorder(10), 0)
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "ms"}}
	if _, err := r.Reconcile(t.Context(), req); err == nil {
		t.Fatal("reconcile succeeded, want an error")
	}
	if n := len(listMachines(t, c)); n != 0 {
		t.Errorf("%d Machines created", n)
	}
}

// staleClient lists Machines from a snapshot, as a lagging cache would.
type staleClient struct {
	ctrlruntimeclient.Client
	snapshot []clusterv1alpha1.Machine
}

func (c *staleClient) List(ctx context.Context, list ctrlruntimeclient.ObjectList, opts ...ctrlruntimeclient.ListOption) error {
	if ml, ok := list.(*clusterv1alpha1.MachineList); ok {
		ml.Items = slices.Clone(c.snapshot)
		return nil
	}
	return c.Client.List(ctx, list, opts...)
}

func TestReconcileWaitsForItsCreationsOnAStaleCache(t *testing.T) {
	set := testMachineSet(3)
	fresh := newTestClient(t, set)
	stale := &staleClient{Client: fresh}
	r := newReconciler(stale, nil, 0)
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "ms"}}
	for i := range 2 {
		if _, err := r.Reconcile(t.Context(), req); err != nil {
			t.Fatalf("reconcile %d: %v", i, err)
		}
	}
	if n := len(listMachines(t, fresh)); n != 3 {
		t.Errorf("%d Machines after two reconciles on a stale cache, want 3", n)
	}
	stale.snapshot = listMachines(t, fresh)
	if _, err := r.Reconcile(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if n := len(listMachines(t, fresh)); n != 3 {
		t.Errorf("%d Machines once the cache caught up, want 3", n)
	}
}
