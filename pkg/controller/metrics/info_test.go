package metrics

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestMachineInfo(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clusterv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	linked := &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "linked", Namespace: "kube-system"}}
	linked.Spec.Versions.Kubelet = "1.34.1"
	linked.Status.NodeRef = &corev1.ObjectReference{Name: "n1"}
	broken := &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "broken", Namespace: "kube-system"}}
	labels := func(m *clusterv1alpha1.Machine) (map[string]string, error) {
		if m.Name == "broken" {
			return nil, errors.New("no providerSpec")
		}
		// Not a label name, and one of the own labels: both left out.
		return map[string]string{"cpus": "2", "osImage": "https://example.com/img", "bad-key": "x", "namespace": "other"}, nil
	}
	reg := prometheus.NewRegistry()
	if err := RegisterMachineInfo(reg, fake.NewClientBuilder().WithScheme(scheme).Build(), nil); err != nil {
		t.Fatal(err)
	}
	// A second registration replaces the source of the first.
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects([]ctrlruntimeclient.Object{linked, broken}...).Build()
	if err := RegisterMachineInfo(reg, c, labels); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"[cpus=2 kubelet_version=1.34.1 machine=linked namespace=kube-system osImage=https://example.com/img phase=Running]": 1,
		"[cpus= kubelet_version= machine=broken namespace=kube-system osImage= phase=Provisioning]":                          1,
	}
	if diff := cmp.Diff(want, scrape(t, reg, "machine_controller_machine_info")); diff != "" {
		t.Errorf("machine info (-want +got):\n%s", diff)
	}
}
