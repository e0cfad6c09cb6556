package cachetrim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// testCase is one object through one transform.
type testCase struct {
	name      string
	transform func(any) (any, error)
	in, out   any
}

// TestTrim: cached VMs lose their template and VMIs their spec but for the
// eviction strategy, cached Nodes their image list; metadata (without
// managedFields), dataVolumeTemplates and status stay; other kinds lose
// only managedFields.
func TestTrim(t *testing.T) {
	for _, tc := range append(infraCases(), userCases()...) {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.transform(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.out, got); diff != "" {
				t.Errorf("trimmed (-want +got):\n%s", diff)
			}
		})
	}
}

// infraCases are the cases of Infra.
func infraCases() []testCase {
	meta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Name: "m", Namespace: "cluster-a", UID: "u", Labels: map[string]string{"a": "b"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "x"}},
		}
	}
	template := &kubevirtcorev1.VirtualMachineInstanceTemplateSpec{Spec: kubevirtcorev1.VirtualMachineInstanceSpec{
		Domain: kubevirtcorev1.DomainSpec{Devices: kubevirtcorev1.Devices{Disks: []kubevirtcorev1.Disk{{Name: "root"}}}},
	}}
	dvs := []kubevirtcorev1.DataVolumeTemplateSpec{{ObjectMeta: metav1.ObjectMeta{Name: "m-root"}}}
	vmStatus := kubevirtcorev1.VirtualMachineStatus{PrintableStatus: kubevirtcorev1.VirtualMachineStatusRunning}
	vmiStatus := kubevirtcorev1.VirtualMachineInstanceStatus{
		Phase: kubevirtcorev1.Running, NodeName: "infra-1",
		Interfaces: []kubevirtcorev1.VirtualMachineInstanceNetworkInterface{{IP: "10.0.0.1"}},
	}
	eviction := ptr.To(kubevirtcorev1.EvictionStrategyLiveMigrate)
	trimmedMeta := meta()
	trimmedMeta.ManagedFields = nil
	return []testCase{{
		name: "infra VirtualMachine", transform: Infra,
		in:  &kubevirtcorev1.VirtualMachine{ObjectMeta: meta(), Spec: kubevirtcorev1.VirtualMachineSpec{Template: template, DataVolumeTemplates: dvs}, Status: vmStatus},
		out: &kubevirtcorev1.VirtualMachine{ObjectMeta: trimmedMeta, Spec: kubevirtcorev1.VirtualMachineSpec{DataVolumeTemplates: dvs}, Status: vmStatus},
	}, {
		name: "infra VirtualMachineInstance", transform: Infra,
		in: &kubevirtcorev1.VirtualMachineInstance{ObjectMeta: meta(), Status: vmiStatus,
			Spec: kubevirtcorev1.VirtualMachineInstanceSpec{Domain: template.Spec.Domain, EvictionStrategy: eviction, Hostname: "m"}},
		out: &kubevirtcorev1.VirtualMachineInstance{ObjectMeta: trimmedMeta, Status: vmiStatus,
			Spec: kubevirtcorev1.VirtualMachineInstanceSpec{EvictionStrategy: eviction}},
	}, {
		name: "infra Secret", transform: Infra,
		in:  &corev1.Secret{ObjectMeta: meta(), Data: map[string][]byte{"userdata": []byte("x")}},
		out: &corev1.Secret{ObjectMeta: trimmedMeta, Data: map[string][]byte{"userdata": []byte("x")}},
	}}
}

// userCases are the cases of User.
func userCases() []testCase {
	managed := []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}
	status := corev1.NodeStatus{
		Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}},
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.33.4"},
	}
	withImages := status
	withImages.Images = []corev1.ContainerImage{{Names: []string{"registry.k8s.io/pause:3.10"}, SizeBytes: 1}}
	spec := corev1.NodeSpec{ProviderID: "kubevirt://m"}
	return []testCase{{
		name: "user Node", transform: User,
		in:  &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "m", ManagedFields: managed}, Spec: spec, Status: withImages},
		out: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Spec: spec, Status: status},
	}, {
		name: "user Pod", transform: User,
		in:  &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ManagedFields: managed}, Spec: corev1.PodSpec{NodeName: "m"}},
		out: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{NodeName: "m"}},
	}, {
		name: "user VirtualMachine keeps its template", transform: User,
		in:  &kubevirtcorev1.VirtualMachine{Spec: kubevirtcorev1.VirtualMachineSpec{Template: &kubevirtcorev1.VirtualMachineInstanceTemplateSpec{}}},
		out: &kubevirtcorev1.VirtualMachine{Spec: kubevirtcorev1.VirtualMachineSpec{Template: &kubevirtcorev1.VirtualMachineInstanceTemplateSpec{}}},
	}}
}
