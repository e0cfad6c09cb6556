package machinedeployment

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8c.io/machine-controller/sdk/apis/cluster/common"

	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

func TestProportionalReplicas(t *testing.T) {
	for _, tc := range []struct {
		name    string
		desired int32
		l       limits
		sets    []scaleState
		want    []int32
	}{
		{
			// 10 desired + 3 surge = 13 sized for; 20 + 3 = 23 now.
			name: "scale up spreads by size", desired: 20, l: limits{surge: 3, unavailable: 2},
			sets: []scaleState{{replicas: 8, maxReplicas: 13}, {replicas: 5, maxReplicas: 13}},
			want: []int32{14, 9},
		},
		{
			name: "scale down spreads by size", desired: 5, l: limits{surge: 3, unavailable: 2},
			sets: []scaleState{{replicas: 8, maxReplicas: 13}, {replicas: 5, maxReplicas: 13}},
			want: []int32{5, 3},
		},
		{
			name: "rounding leftover goes to the largest, newest on a tie when adding", desired: 4, l: limits{surge: 0},
			sets: []scaleState{{replicas: 1, maxReplicas: 3}, {replicas: 1, maxReplicas: 3}, {replicas: 1, maxReplicas: 3}},
			want: []int32{1, 1, 2},
		},
		{
			name: "rounding leftover is taken from the largest, oldest on a tie when removing", desired: 2, l: limits{surge: 0},
			sets: []scaleState{{replicas: 1, maxReplicas: 3}, {replicas: 1, maxReplicas: 3}, {replicas: 1, maxReplicas: 3}},
			want: []int32{0, 1, 1},
		},
		{
			name: "unknown sizing uses the current total", desired: 9, l: limits{surge: 1},
			sets: []scaleState{{replicas: 3, maxReplicas: -1}, {replicas: 2, maxReplicas: -1}},
			want: []int32{6, 4},
		},
		{
			name: "scale to zero empties every MachineSet", desired: 0, l: limits{surge: 1},
			sets: []scaleState{{replicas: 3, maxReplicas: 4}, {replicas: 1, maxReplicas: 4}},
			want: []int32{0, 0},
		},
		{
			name: "already the allowed total", desired: 3, l: limits{surge: 1},
			sets: []scaleState{{replicas: 3, maxReplicas: 4}, {replicas: 1, maxReplicas: 4}},
			want: []int32{3, 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := proportionalReplicas(tc.desired, tc.l, tc.sets)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("replicas (-want +got):\n%s", diff)
			}
			var sum int32
			for _, n := range got {
				sum += n
				if n < 0 {
					t.Errorf("negative replicas in %v", got)
				}
			}
			if want := tc.desired + tc.l.surge; tc.desired > 0 && sum != want {
				t.Errorf("total %d, want desired+surge %d", sum, want)
			}
		})
	}
}

// TestReconcileScalesStuckRolloutProportionally: a rollout whose new
// Machines never become available is scaled up; the old template, which
// works, gets its share, as with a Kubernetes Deployment.
func TestReconcileScalesStuckRolloutProportionally(t *testing.T) {
	md := testDeployment(4, `{"image":"a"}`, 2, 0)
	c := newTestClient(t, md)
	r := newReconciler(c, events.NewFakeRecorder(100))
	reconcileOnce(t, r)
	settle(t, c, true)
	reconcileOnce(t, r)

	md = getDeployment(t, c)
	md.Spec.Template = *template(`{"image":"broken"}`, map[string]string{"pool": "a"})
	if err := c.Update(t.Context(), md); err != nil {
		t.Fatal(err)
	}
	// The new MachineSet takes the surge and its Machines never become
	// available, so the old one keeps all four.
	for range 3 {
		reconcileOnce(t, r)
		settle(t, c, false)
	}
	if got := setReplicas(t, c); !cmp.Equal(got, []int32{4, 2}) {
		t.Fatalf("stuck rollout: replicas %v, want [4 2]", got)
	}

	md = getDeployment(t, c)
	md.Spec.Replicas = ptr.To[int32](10)
	if err := c.Update(t.Context(), md); err != nil {
		t.Fatal(err)
	}
	reconcileOnce(t, r)
	// 6 sized for, 12 now: both double.
	if got := setReplicas(t, c); !cmp.Equal(got, []int32{8, 4}) {
		t.Errorf("after scaling to 10: replicas %v, want [8 4]", got)
	}
	for _, ms := range listSets(t, c) {
		if got := ms.Annotations[common.DesiredReplicasAnnotation]; got != "10" {
			t.Errorf("MachineSet %s records desired %q, want 10", ms.Name, got)
		}
		if got := ms.Annotations[common.MaxReplicasAnnotation]; got != "12" {
			t.Errorf("MachineSet %s records max %q, want 12", ms.Name, got)
		}
	}
	// The scaling event is over: the rollout goes on and keeps the old
	// Machines while the new ones are unavailable.
	for range 3 {
		settle(t, c, false)
		reconcileOnce(t, r)
	}
	if got := setReplicas(t, c); !cmp.Equal(got, []int32{8, 4}) {
		t.Errorf("stuck rollout after scaling: replicas %v, want [8 4]", got)
	}

	// Scaling down takes from both, in proportion.
	md = getDeployment(t, c)
	md.Spec.Replicas = ptr.To[int32](4)
	if err := c.Update(t.Context(), md); err != nil {
		t.Fatal(err)
	}
	reconcileOnce(t, r)
	if got := setReplicas(t, c); !cmp.Equal(got, []int32{4, 2}) {
		t.Errorf("after scaling back to 4: replicas %v, want [4 2]", got)
	}
}

// setReplicas lists spec.replicas of the MachineSets, oldest first.
func setReplicas(t *testing.T, c ctrlruntimeclient.Client) []int32 {
	t.Helper()
	var out []int32
	for _, ms := range listSets(t, c) {
		out = append(out, ptr.Deref(ms.Spec.Replicas, 1))
	}
	return out
}
