package envtest

import (
	"strings"
	"testing"

	kubevirtcorev1 "kubevirt.io/api/core/v1"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testAdmitVM checks that AdmitVM has CDI judge the DataVolumes
// virt-controller makes of a VM's templates, and that they are made as
// virt-controller makes them.
func testAdmitVM(t *testing.T, env *Env, vm *kubevirtcorev1.VirtualMachine) {
	t.Helper()
	withTemplate := func(source cdicorev1beta1.DataVolumeSource) *kubevirtcorev1.VirtualMachine {
		v := vm.DeepCopy()
		v.Name = "vm-with-disk"
		v.Spec.DataVolumeTemplates = []kubevirtcorev1.DataVolumeTemplateSpec{{
			ObjectMeta: metav1.ObjectMeta{Name: "root"},
			Spec: cdicorev1beta1.DataVolumeSpec{
				Source: &source,
				Storage: &cdicorev1beta1.StorageSpec{Resources: corev1.VolumeResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				}},
			},
		}}
		v.Spec.Template.Spec.Volumes = []kubevirtcorev1.Volume{{Name: "root", VolumeSource: kubevirtcorev1.VolumeSource{
			DataVolume: &kubevirtcorev1.DataVolumeSource{Name: "root"},
		}}}
		return v
	}
	t.Run("CDI refuses a DataVolume KubeVirt admits", func(t *testing.T) {
		v := withTemplate(cdicorev1beta1.DataVolumeSource{HTTP: &cdicorev1beta1.DataVolumeSourceHTTP{URL: "ftp://images.example.com/disk.img"}})
		err := env.AdmitVM(t.Context(), v)
		if err == nil || !strings.Contains(err.Error(), cdiValidatingWebhook) || !strings.Contains(err.Error(), "Invalid source URL scheme") {
			t.Errorf("AdmitVM = %v, want CDI's refusal of the URL scheme", err)
		}
	})
	t.Run("DataVolumes are made as virt-controller makes them", func(t *testing.T) {
		v := withTemplate(cdicorev1beta1.DataVolumeSource{PVC: &cdicorev1beta1.DataVolumeSourcePVC{Name: "image"}})
		if err := env.AdmitVM(t.Context(), v); err != nil {
			t.Fatalf("AdmitVM: %v", err)
		}
		dvs, err := env.kubeVirtTool.dataVolumes(t.Context(), v)
		if err != nil {
			t.Fatal(err)
		}
		if len(dvs) != 1 {
			t.Fatalf("%d DataVolumes, want 1", len(dvs))
		}
		dv := dvs[0]
		if dv.Namespace != v.Namespace || dv.Spec.Source.PVC.Namespace != v.Namespace {
			t.Errorf("DataVolume in %q cloning from %q, want both in the VM's namespace %q", dv.Namespace, dv.Spec.Source.PVC.Namespace, v.Namespace)
		}
		if owner := metav1.GetControllerOf(dv); owner == nil || owner.Kind != "VirtualMachine" || owner.Name != v.Name {
			t.Errorf("DataVolume controller = %v, want VirtualMachine %s", owner, v.Name)
		}
	})
}
