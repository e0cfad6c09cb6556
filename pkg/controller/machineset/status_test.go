package machineset

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestComputeStatus(t *testing.T) {
	labels := map[string]string{"pool": "a"}
	labelled := func(m *clusterv1alpha1.Machine) { m.Labels = labels }
	deleting := func(m *clusterv1alpha1.Machine) { m.DeletionTimestamp = &metav1.Time{Time: t0} }
	now := t0.Add(time.Hour)
	state := func(m *clusterv1alpha1.Machine, readyAgo time.Duration) machineState {
		if readyAgo < 0 {
			return machineState{machine: m}
		}
		return machineState{machine: m, ready: true, readySince: now.Add(-readyAgo)}
	}
	for _, tc := range []struct {
		name     string
		minReady int32
		states   []machineState
		want     clusterv1alpha1.MachineSetStatus
		wantWait time.Duration
	}{
		{name: "empty", want: clusterv1alpha1.MachineSetStatus{ObservedGeneration: 7}},
		{
			name: "counts",
			states: []machineState{
				state(testMachine("a", 1, labelled), time.Minute),
				state(testMachine("b", 1), time.Minute),
				state(testMachine("c", 1, labelled), -1),
				state(testMachine("d", 1, labelled, deleting), time.Minute),
			},
			want: clusterv1alpha1.MachineSetStatus{Replicas: 3, FullyLabeledReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, ObservedGeneration: 7},
		},
		{
			name: "minReadySeconds", minReady: 30,
			states: []machineState{
				state(testMachine("a", 1), time.Minute),
				state(testMachine("b", 1), 20*time.Second),
				state(testMachine("c", 1), 10*time.Second),
			},
			want:     clusterv1alpha1.MachineSetStatus{Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 1, ObservedGeneration: 7},
			wantWait: 10 * time.Second,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms := &clusterv1alpha1.MachineSet{ObjectMeta: metav1.ObjectMeta{Generation: 7}}
			ms.Spec.MinReadySeconds = tc.minReady
			ms.Spec.Template.Labels = labels
			got, wait := computeStatus(ms, tc.states, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if wait != tc.wantWait {
				t.Errorf("wait = %s, want %s", wait, tc.wantWait)
			}
		})
	}
}
