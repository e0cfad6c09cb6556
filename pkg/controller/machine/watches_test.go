package machine

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNodeChanged(t *testing.T) {
	base := func() *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"a": "b"}},
			Spec:       corev1.NodeSpec{ProviderID: "kubevirt://n"},
			Status: corev1.NodeStatus{
				Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			},
		}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*corev1.Node)
		want   bool
	}{
		{name: "heartbeat only", mutate: func(n *corev1.Node) {
			n.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(time.Now())
			n.ResourceVersion = "2"
		}},
		{name: "not ready", want: true, mutate: func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }},
		{name: "label removed", want: true, mutate: func(n *corev1.Node) { delete(n.Labels, "a") }},
		{name: "providerID set", want: true, mutate: func(n *corev1.Node) { n.Spec.ProviderID = "kubevirt://m" }},
		{name: "taint removed by hand", want: true, mutate: func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: "x"}} }},
		{name: "address changed", want: true, mutate: func(n *corev1.Node) { n.Status.Addresses[0].Address = "10.0.0.2" }},
		{name: "cordoned", want: true, mutate: func(n *corev1.Node) { n.Spec.Unschedulable = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := base()
			tc.mutate(changed)
			if got := nodeChanged(base(), changed); got != tc.want {
				t.Errorf("nodeChanged = %v, want %v", got, tc.want)
			}
		})
	}
}
