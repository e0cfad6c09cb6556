package machine

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func testPod(name, node string, mods ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PodSpec{NodeName: node}}
	for _, m := range mods {
		m(p)
	}
	return p
}

func readyNode(name string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
}

func TestShouldDrain(t *testing.T) {
	notReady := readyNode("n")
	notReady.Status.Conditions[0].Status = corev1.ConditionUnknown
	skip := readyNode("n")
	skip.Annotations = map[string]string{AnnotationSkipEviction: "true"}
	for _, tc := range []struct {
		name      string
		node      *corev1.Node
		deletedAt time.Time
		want      bool
	}{
		{name: "ready, just deleted", node: readyNode("n"), deletedAt: now, want: true},
		{name: "timed out", node: readyNode("n"), deletedAt: now.Add(-time.Hour)},
		{name: "not ready", node: notReady, deletedAt: now},
		{name: "skip annotation", node: skip, deletedAt: now},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := shouldDrain(tc.node, tc.deletedAt, now, 10*time.Minute); got != tc.want {
				t.Errorf("shouldDrain = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestReconcileDeleteDrainsFirst(t *testing.T) {
	m := newMachine()
	m.Finalizers = []string{FinalizerDelete, FinalizerNodeDelete}
	m.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: "n"}
	f := newFixture(t, m, readyNode("n"), testPod("app", "n"))

	res, err := f.reconcile()
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter != pollDrain {
		t.Errorf("requeue after %s while draining, want %s", res.RequeueAfter, pollDrain)
	}
	if f.provider.cleanupCalls != 0 {
		t.Error("Cleanup called before the Node was drained")
	}
	if err := f.client.Get(t.Context(), ctrlruntimeclient.ObjectKey{Namespace: "default", Name: "app"}, &corev1.Pod{}); !apierrors.IsNotFound(err) {
		t.Errorf("pod not evicted: %v", err)
	}
	if res, err = f.reconcile(); err != nil || res != (reconcile.Result{}) {
		t.Fatalf("second reconcile: %v, %v", res, err)
	}
	if f.provider.cleanupCalls != 1 {
		t.Errorf("Cleanup called %d times after the drain, want 1", f.provider.cleanupCalls)
	}
}
