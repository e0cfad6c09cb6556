package envtest

import (
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// NewVM returns the smallest VirtualMachine KubeVirt's schema and admission
// accept: halted, 64Mi of memory, no devices.
func NewVM(namespace, name string) *kubevirtcorev1.VirtualMachine {
	return &kubevirtcorev1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: kubevirtcorev1.VirtualMachineSpec{
			RunStrategy: ptr.To(kubevirtcorev1.RunStrategyHalted),
			Template:    &kubevirtcorev1.VirtualMachineInstanceTemplateSpec{Spec: minimalVMISpec()},
		},
	}
}

// NewVMI returns the smallest VirtualMachineInstance KubeVirt's schema and
// admission accept.
func NewVMI(namespace, name string) *kubevirtcorev1.VirtualMachineInstance {
	return &kubevirtcorev1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       minimalVMISpec(),
	}
}

func minimalVMISpec() kubevirtcorev1.VirtualMachineInstanceSpec {
	return kubevirtcorev1.VirtualMachineInstanceSpec{Domain: kubevirtcorev1.DomainSpec{
		Resources: kubevirtcorev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
	}}
}
