package machinedeployment

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestComputeStatus(t *testing.T) {
	md := &clusterv1alpha1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Generation: 4}, Spec: clusterv1alpha1.MachineDeploymentSpec{Replicas: ptr.To[int32](3)}}
	withStatus := func(replicas, ready, available int32) *clusterv1alpha1.MachineSet {
		return &clusterv1alpha1.MachineSet{Status: clusterv1alpha1.MachineSetStatus{Replicas: replicas, ReadyReplicas: ready, AvailableReplicas: available}}
	}
	for _, tc := range []struct {
		name   string
		newSet *clusterv1alpha1.MachineSet
		olds   []*clusterv1alpha1.MachineSet
		want   clusterv1alpha1.MachineDeploymentStatus
	}{
		{name: "nothing yet", want: clusterv1alpha1.MachineDeploymentStatus{ObservedGeneration: 4, UnavailableReplicas: 3}},
		{
			name: "mid rollout", newSet: withStatus(1, 1, 0), olds: []*clusterv1alpha1.MachineSet{withStatus(2, 2, 2), withStatus(1, 0, 0)},
			want: clusterv1alpha1.MachineDeploymentStatus{ObservedGeneration: 4, Replicas: 4, UpdatedReplicas: 1, ReadyReplicas: 3, AvailableReplicas: 2, UnavailableReplicas: 1},
		},
		{
			name: "surplus is not negative unavailability", newSet: withStatus(4, 4, 4),
			want: clusterv1alpha1.MachineDeploymentStatus{ObservedGeneration: 4, Replicas: 4, UpdatedReplicas: 4, ReadyReplicas: 4, AvailableReplicas: 4},
		},
		{
			name: "only old sets", olds: []*clusterv1alpha1.MachineSet{withStatus(3, 3, 3)},
			want: clusterv1alpha1.MachineDeploymentStatus{ObservedGeneration: 4, Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, computeStatus(md, tc.newSet, tc.olds)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNextProgress(t *testing.T) {
	now := t0.Add(time.Hour)
	deployment := func(paused bool, deadline *int32) *clusterv1alpha1.MachineDeployment {
		return &clusterv1alpha1.MachineDeployment{Spec: clusterv1alpha1.MachineDeploymentSpec{Paused: paused, ProgressDeadlineSeconds: deadline}}
	}
	deadline := ptr.To[int32](600)
	stuck := clusterv1alpha1.MachineDeploymentStatus{Replicas: 4, UpdatedReplicas: 1, AvailableReplicas: 3}
	moved := clusterv1alpha1.MachineDeploymentStatus{Replicas: 4, UpdatedReplicas: 1, AvailableReplicas: 4}
	for _, tc := range []struct {
		name          string
		md            *clusterv1alpha1.MachineDeployment
		prev          progress
		after         clusterv1alpha1.MachineDeploymentStatus
		created, done bool
		want          progress
		wantWait      time.Duration
	}{
		{name: "paused", md: deployment(true, deadline), prev: progress{ReasonMachineSetUpdated, t0}, after: stuck, want: progress{ReasonPaused, now}},
		{name: "still paused keeps its time", md: deployment(true, deadline), prev: progress{ReasonPaused, t0}, after: stuck, want: progress{ReasonPaused, t0}},
		{name: "complete", md: deployment(false, deadline), prev: progress{ReasonMachineSetUpdated, t0}, done: true, want: progress{ReasonNewMachineSetAvailable, now}},
		{name: "created", md: deployment(false, deadline), prev: progress{ReasonNewMachineSetAvailable, t0}, created: true, after: stuck, want: progress{ReasonNewMachineSetCreated, now}, wantWait: 11 * time.Minute},
		{name: "progressed", md: deployment(false, deadline), prev: progress{ReasonMachineSetUpdated, t0}, after: moved, want: progress{ReasonMachineSetUpdated, now}, wantWait: 11 * time.Minute},
		// The time recorded less than the resolution (60 s of 600) ago
		// stays: no patch of the MachineDeployment for this progress.
		{
			name: "progressed within the resolution", md: deployment(false, deadline), prev: progress{ReasonMachineSetUpdated, now.Add(-59 * time.Second)}, after: moved,
			want: progress{ReasonMachineSetUpdated, now.Add(-59 * time.Second)}, wantWait: 11*time.Minute - 59*time.Second,
		},
		{
			name: "progressed at the resolution", md: deployment(false, deadline), prev: progress{ReasonMachineSetUpdated, now.Add(-time.Minute)}, after: moved,
			want: progress{ReasonMachineSetUpdated, now}, wantWait: 11 * time.Minute,
		},
		{
			name: "a new reason is recorded at once", md: deployment(false, deadline), prev: progress{ReasonNewMachineSetCreated, now.Add(-time.Second)}, after: moved,
			want: progress{ReasonMachineSetUpdated, now}, wantWait: 11 * time.Minute,
		},
		// The last progress may have been up to the resolution after the
		// recorded time: the deadline is not declared before that passed.
		{
			name: "stuck past the deadline, within the resolution", md: deployment(false, deadline), prev: progress{ReasonMachineSetUpdated, now.Add(-10*time.Minute - 30*time.Second)}, after: stuck,
			want: progress{ReasonMachineSetUpdated, now.Add(-10*time.Minute - 30*time.Second)}, wantWait: 30 * time.Second,
		},
		{name: "resumed", md: deployment(false, deadline), prev: progress{ReasonPaused, t0}, after: stuck, want: progress{ReasonMachineSetUpdated, now}, wantWait: 11 * time.Minute},
		{name: "stuck within the deadline", md: deployment(false, deadline), prev: progress{ReasonMachineSetUpdated, now.Add(-time.Minute)}, after: stuck, want: progress{ReasonMachineSetUpdated, now.Add(-time.Minute)}, wantWait: 10 * time.Minute},
		{name: "stuck past the deadline", md: deployment(false, deadline), prev: progress{ReasonMachineSetUpdated, t0}, after: stuck, want: progress{ReasonProgressDeadlineExceeded, t0}},
		{name: "exceeded stays exceeded", md: deployment(false, deadline), prev: progress{ReasonProgressDeadlineExceeded, t0}, after: stuck, want: progress{ReasonProgressDeadlineExceeded, t0}},
		{name: "exceeded, then progress", md: deployment(false, deadline), prev: progress{ReasonProgressDeadlineExceeded, t0}, after: moved, want: progress{ReasonMachineSetUpdated, now}, wantWait: 11 * time.Minute},
		{name: "no deadline", md: deployment(false, nil), prev: progress{ReasonMachineSetUpdated, t0}, after: stuck, want: progress{ReasonMachineSetUpdated, t0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, wait := nextProgress(tc.md, tc.prev, stuck, tc.after, tc.created, tc.done, now)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(progress{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if wait != tc.wantWait {
				t.Errorf("wait = %s, want %s", wait, tc.wantWait)
			}
		})
	}
}

func TestReconcileReportsAnExceededDeadline(t *testing.T) {
	md := testDeployment(3, `{"image":"a"}`, 1, 0)
	c := newTestClient(t, md)
	recorder := events.NewFakeRecorder(100)
	r := newReconciler(c, recorder)
	now := t0
	r.now = func() time.Time { return now }
	reconcileOnce(t, r)
	// The Machines never become available.
	settle(t, c, false)
	reconcileOnce(t, r)
	now = now.Add(9 * time.Minute)
	reconcileOnce(t, r)
	// Machines that exist and are ready are progress, though not available.
	if p := getDeployment(t, c).Annotations[AnnotationProgress]; p != ReasonMachineSetUpdated {
		t.Errorf("before the deadline: progress %q, want %s", p, ReasonMachineSetUpdated)
	}
	// The deadline (10 min) plus the resolution of the progress time
	// (1 min) after the last progress.
	now = now.Add(3 * time.Minute)
	reconcileOnce(t, r)
	md = getDeployment(t, c)
	if p := md.Annotations[AnnotationProgress]; p != ReasonProgressDeadlineExceeded {
		t.Errorf("after the deadline: progress %q, want %s", p, ReasonProgressDeadlineExceeded)
	}
	if got := md.Annotations[AnnotationProgressTime]; got != t0.Format(time.RFC3339) {
		t.Errorf("progress time %q, want the last progress %s", got, t0.Format(time.RFC3339))
	}
	var warned bool
	for len(recorder.Events) > 0 {
		warned = warned || strings.Contains(<-recorder.Events, ReasonProgressDeadlineExceeded)
	}
	if !warned {
		t.Error("no ProgressDeadlineExceeded event")
	}
}
