package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTrimForCache: cached Nodes lose managedFields and their image list,
// nothing else; other kinds lose only managedFields.
func TestTrimForCache(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}
	status := corev1.NodeStatus{
		Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}},
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.33.4"},
	}
	withImages := status
	withImages.Images = []corev1.ContainerImage{{Names: []string{"registry.k8s.io/pause:3.10"}, SizeBytes: 1}}
	spec := corev1.NodeSpec{ProviderID: "kubevirt://m"}
	for _, tc := range []struct {
		name    string
		in, out any
	}{{
		name: "Node",
		in:   &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "m", ManagedFields: managed}, Spec: spec, Status: withImages},
		out:  &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Spec: spec, Status: status},
	}, {
		name: "Pod",
		in:   &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ManagedFields: managed}, Spec: corev1.PodSpec{NodeName: "m"}},
		out:  &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{NodeName: "m"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := trimForCache(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.out, got); diff != "" {
				t.Errorf("trimmed (-want +got):\n%s", diff)
			}
		})
	}
}
