package machineset

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestSetOfNode(t *testing.T) {
	owned := &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "owned", Namespace: "kube-system", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: clusterv1alpha1.SchemeGroupVersion.String(), Kind: "MachineSet", Name: "workers", UID: "ms-uid", Controller: ptr.To(true),
	}}}}
	standalone := &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "standalone", Namespace: "kube-system"}}
	r := &reconciler{client: newTestClient(t, owned, standalone)}
	for _, tc := range []struct {
		name       string
		annotation string
		want       []reconcile.Request
	}{
		{name: "Machine of a MachineSet", annotation: "kube-system/owned",
			want: []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "kube-system", Name: "workers"}}}},
		{name: "standalone Machine", annotation: "kube-system/standalone"},
		{name: "missing Machine", annotation: "kube-system/gone"},
		{name: "no annotation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
			if tc.annotation != "" {
				node.Annotations = map[string]string{annotationMachine: tc.annotation}
			}
			if diff := cmp.Diff(tc.want, r.setOfNode(t.Context(), node)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodeReadinessChanged(t *testing.T) {
	node := func(status corev1.ConditionStatus) *corev1.Node {
		return &corev1.Node{Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}}}
	}
	for _, tc := range []struct {
		name     string
		old, new *corev1.Node
		want     bool
	}{
		{name: "became ready", old: node(corev1.ConditionUnknown), new: node(corev1.ConditionTrue), want: true},
		{name: "became not ready", old: node(corev1.ConditionTrue), new: node(corev1.ConditionFalse), want: true},
		{name: "heartbeat", old: node(corev1.ConditionTrue), new: node(corev1.ConditionTrue)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := nodeReadinessChanged.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
