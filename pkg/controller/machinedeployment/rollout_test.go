package machinedeployment

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func TestResolveLimits(t *testing.T) {
	i := func(v int) *intstr.IntOrString { return ptr.To(intstr.FromInt(v)) }
	p := func(v string) *intstr.IntOrString { return ptr.To(intstr.FromString(v)) }
	for _, tc := range []struct {
		name               string
		surge, unavailable *intstr.IntOrString
		replicas           int32
		want               limits
		wantErr            bool
	}{
		{name: "defaults: surge 1, unavailable 0", replicas: 3, want: limits{surge: 1}},
		{name: "integers", surge: i(2), unavailable: i(1), replicas: 5, want: limits{surge: 2, unavailable: 1}},
		{name: "both zero: one may be unavailable", surge: i(0), unavailable: i(0), replicas: 3, want: limits{unavailable: 1}},
		{name: "both zero percent: one may be unavailable", surge: p("0%"), unavailable: p("0%"), replicas: 3, want: limits{unavailable: 1}},
		{name: "surge percent rounds up", surge: p("25%"), unavailable: i(0), replicas: 3, want: limits{surge: 1}},
		{name: "unavailable percent rounds down", surge: i(0), unavailable: p("25%"), replicas: 7, want: limits{unavailable: 1}},
		{name: "unavailable percent rounding to zero with surge", surge: p("10%"), unavailable: p("25%"), replicas: 3, want: limits{surge: 1}},
		{name: "unavailable percent rounding to zero without surge", surge: i(0), unavailable: p("25%"), replicas: 3, want: limits{unavailable: 1}},
		{name: "both percent", surge: p("50%"), unavailable: p("50%"), replicas: 5, want: limits{surge: 3, unavailable: 2}},
		{name: "unavailable capped at replicas", surge: i(0), unavailable: i(10), replicas: 2, want: limits{unavailable: 2}},
		{name: "hundred percent surge", surge: p("100%"), unavailable: i(0), replicas: 4, want: limits{surge: 4}},
		{name: "zero replicas", replicas: 0, want: limits{surge: 1}},
		{name: "negative surge", surge: i(-1), replicas: 3, wantErr: true},
		{name: "not a percentage", unavailable: p("lots"), replicas: 3, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolveLimits(tc.surge, tc.unavailable, tc.replicas)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(limits{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewSetReplicas(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		desired, total, current int32
		l                       limits
		want                    int32
	}{
		{name: "fresh deployment", desired: 3, total: 0, current: 0, l: limits{surge: 1}, want: 3},
		{name: "first step of a rollout", desired: 3, total: 3, current: 0, l: limits{surge: 1}, want: 1},
		{name: "surge exhausted", desired: 3, total: 4, current: 1, l: limits{surge: 1}, want: 1},
		{name: "no surge", desired: 3, total: 3, current: 0, l: limits{unavailable: 1}, want: 0},
		{name: "room after old scale down", desired: 3, total: 2, current: 0, l: limits{unavailable: 1}, want: 1},
		{name: "never above desired", desired: 3, total: 3, current: 2, l: limits{surge: 5}, want: 3},
		{name: "scale down to desired", desired: 2, total: 5, current: 5, l: limits{surge: 1}, want: 2},
		{name: "scale up of a complete rollout", desired: 5, total: 3, current: 3, l: limits{surge: 1}, want: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := newSetReplicas(tc.desired, tc.total, tc.current, tc.l); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}

func TestOldSetReplicas(t *testing.T) {
	for _, tc := range []struct {
		name    string
		desired int32
		l       limits
		newSet  setState
		olds    []setState
		want    []int32
	}{
		{
			name: "surge only: one old goes once the new one is available", desired: 3, l: limits{surge: 1},
			newSet: setState{replicas: 1, available: 1}, olds: []setState{{replicas: 3, available: 3}}, want: []int32{2},
		},
		{
			name: "surge only: nothing while the new one is unavailable", desired: 3, l: limits{surge: 1},
			newSet: setState{replicas: 1}, olds: []setState{{replicas: 3, available: 3}}, want: []int32{3},
		},
		{
			name: "unavailable budget without surge", desired: 3, l: limits{unavailable: 1},
			olds: []setState{{replicas: 3, available: 3}}, want: []int32{2},
		},
		{
			name: "unavailable old replicas go first, oldest set first", desired: 4, l: limits{surge: 1},
			newSet: setState{replicas: 1, available: 1},
			olds:   []setState{{replicas: 2, available: 1}, {replicas: 2, available: 2}}, want: []int32{1, 2},
		},
		{
			name: "scale down of the deployment during a rollout", desired: 2, l: limits{surge: 1},
			newSet: setState{replicas: 2, available: 2}, olds: []setState{{replicas: 3, available: 3}}, want: []int32{0},
		},
		{
			name: "large unavailable budget", desired: 4, l: limits{surge: 2, unavailable: 2},
			newSet: setState{replicas: 2}, olds: []setState{{replicas: 4, available: 4}}, want: []int32{2},
		},
		{name: "no old sets", desired: 3, l: limits{surge: 1}, newSet: setState{replicas: 3, available: 3}, want: []int32{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := oldSetReplicas(tc.desired, tc.l, tc.newSet, tc.olds)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestRolloutInvariants plays whole rollouts against an ideal MachineSet
// (Machines created at once, available one step later, deleted at once)
// and checks every step against the limits.
func TestRolloutInvariants(t *testing.T) {
	for _, desired := range []int32{1, 2, 3, 5, 10} {
		for _, surge := range []string{"0", "1", "2", "25%", "100%"} {
			for _, unavailable := range []string{"0", "1", "3", "25%", "50%"} {
				name := fmt.Sprintf("replicas %d surge %s unavailable %s", desired, surge, unavailable)
				t.Run(name, func(t *testing.T) {
					l, err := resolveLimits(ptr.To(intstr.Parse(surge)), ptr.To(intstr.Parse(unavailable)), desired)
					if err != nil {
						t.Fatal(err)
					}
					playRollout(t, desired, l)
				})
			}
		}
	}
}

func playRollout(t *testing.T, desired int32, l limits) {
	t.Helper()
	newSet := setState{}
	olds := []setState{{replicas: desired, available: desired}}
	for step := range 100 {
		total, available := newSet.replicas, newSet.available
		for _, s := range olds {
			total += s.replicas
			available += s.available
		}
		if total > desired+l.surge {
			t.Fatalf("step %d: %d Machines, more than %d+%d", step, total, desired, l.surge)
		}
		if available < desired-l.unavailable {
			t.Fatalf("step %d: %d available, fewer than %d-%d", step, available, desired, l.unavailable)
		}
		if newSet.replicas == desired && newSet.available == desired && olds[0].replicas == 0 {
			return
		}
		// The new Machines of the previous step are available now.
		newSet.available = newSet.replicas
		want := newSetReplicas(desired, total, newSet.replicas, l)
		if want > newSet.replicas {
			newSet.replicas = want
			continue
		}
		for i, n := range oldSetReplicas(desired, l, newSet, olds) {
			olds[i].replicas, olds[i].available = n, min(olds[i].available, n)
		}
	}
	t.Fatalf("rollout did not finish: new %+v, old %+v", newSet, olds)
}

func TestPausedReplicas(t *testing.T) {
	for _, tc := range []struct {
		name    string
		desired int32
		current []int32
		want    []int32
	}{
		{name: "grow the last", desired: 5, current: []int32{1, 2}, want: []int32{1, 4}},
		{name: "shrink the first first", desired: 2, current: []int32{2, 3}, want: []int32{0, 2}},
		{name: "shrink to zero", desired: 0, current: []int32{2, 3}, want: []int32{0, 0}},
		{name: "unchanged", desired: 3, current: []int32{3}, want: []int32{3}},
		{name: "none", desired: 3, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, pausedReplicas(tc.desired, tc.current)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
