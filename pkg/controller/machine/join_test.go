package machine

import (
	"strings"
	"testing"
	"time"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestReconcileJoinTimeout(t *testing.T) {
	created := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name        string
		owned       bool
		timeout     time.Duration
		age         time.Duration
		wantDeleted bool
		wantRequeue time.Duration
	}{
		{name: "disabled", owned: true, age: time.Hour},
		{name: "standalone Machine is kept", timeout: time.Minute, age: time.Hour},
		{name: "within the timeout", owned: true, timeout: 10 * time.Minute, age: 4 * time.Minute, wantRequeue: 6 * time.Minute},
		{name: "timed out", owned: true, timeout: 10 * time.Minute, age: 11 * time.Minute, wantDeleted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMachine()
			m.CreationTimestamp = metav1.NewTime(created)
			m.Finalizers = []string{FinalizerDelete, FinalizerNodeDelete}
			if tc.owned {
				m.OwnerReferences = []metav1.OwnerReference{ownerRef("MachineSet", "ms", "ms-uid")}
			}
			f := newFixture(t, m)
			f.provider.instances["m-1"] = &fakeInstance{name: "m-1", addresses: map[string]corev1.NodeAddressType{"10.0.0.1": corev1.NodeInternalIP}}
			f.r.joinTimeout = tc.timeout
			f.r.now = func() time.Time { return created.Add(tc.age) }
			res, err := f.reconcile()
			if err != nil {
				t.Fatal(err)
			}
			if res.RequeueAfter != tc.wantRequeue {
				t.Errorf("requeue after %s, want %s", res.RequeueAfter, tc.wantRequeue)
			}
			got := &clusterv1alpha1.Machine{}
			err = f.client.Get(t.Context(), f.key, got)
			if err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
			if deleted := err != nil || got.DeletionTimestamp != nil; deleted != tc.wantDeleted {
				t.Errorf("deleted = %v, want %v", deleted, tc.wantDeleted)
			}
			evs := f.events()
			timedOut := len(evs) == 1 && strings.HasPrefix(evs[0], "Warning JoinTimeout")
			if timedOut != tc.wantDeleted {
				t.Errorf("events = %v", evs)
			}
		})
	}
}
