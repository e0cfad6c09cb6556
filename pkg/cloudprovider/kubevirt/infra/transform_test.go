package infra

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestTrimForCache: cached VMs lose their template and VMIs their spec
// but for the eviction strategy; metadata (without managedFields),
// dataVolumeTemplates and status stay; other kinds lose only managedFields.
func TestTrimForCache(t *testing.T) {
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
	for _, tc := range []struct {
		name    string
		in, out any
	}{{
		name: "VirtualMachine",
		in:   &kubevirtcorev1.VirtualMachine{ObjectMeta: meta(), Spec: kubevirtcorev1.VirtualMachineSpec{Template: template, DataVolumeTemplates: dvs}, Status: vmStatus},
		out:  &kubevirtcorev1.VirtualMachine{ObjectMeta: trimmedMeta, Spec: kubevirtcorev1.VirtualMachineSpec{DataVolumeTemplates: dvs}, Status: vmStatus},
	}, {
		name: "VirtualMachineInstance",
		in: &kubevirtcorev1.VirtualMachineInstance{ObjectMeta: meta(), Status: vmiStatus,
			Spec: kubevirtcorev1.VirtualMachineInstanceSpec{Domain: template.Spec.Domain, EvictionStrategy: eviction, Hostname: "m"}},
		out: &kubevirtcorev1.VirtualMachineInstance{ObjectMeta: trimmedMeta, Status: vmiStatus,
			Spec: kubevirtcorev1.VirtualMachineInstanceSpec{EvictionStrategy: eviction}},
	}, {
		name: "Secret",
		in:   &corev1.Secret{ObjectMeta: meta(), Data: map[string][]byte{"userdata": []byte("x")}},
		out:  &corev1.Secret{ObjectMeta: trimmedMeta, Data: map[string][]byte{"userdata": []byte("x")}},
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
