package webhook

import (
	"strings"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"
)

// patchAnnotations returns the annotations that reach a Machine (a
// template's for MachineDeployments and MachineSets) and their path.
func patchAnnotations(obj ownedObject) (map[string]string, *field.Path) {
	switch o := obj.(type) {
	case *clusterv1alpha1.MachineDeployment:
		return o.Spec.Template.Annotations, field.NewPath("spec", "template", "metadata", "annotations")
	case *clusterv1alpha1.MachineSet:
		return o.Spec.Template.Annotations, field.NewPath("spec", "template", "metadata", "annotations")
	case *clusterv1alpha1.Machine:
		return o.Annotations, field.NewPath("metadata", "annotations")
	}
	return nil, nil
}

// checkVMPatch refuses a VM patch annotation the provider would refuse:
// it builds the VM of the loaded settings offline, as render does, and
// reports the builder's refusal of the patch. Without settings (a spec
// that does not load, which check refuses) only the patch's syntax is
// checked.
func checkVMPatch(settings *config.Settings, annotations map[string]string, path *field.Path) field.ErrorList {
	value, ok := annotations[vm.AnnotationVMPatch]
	if !ok {
		return nil
	}
	at := path.Key(vm.AnnotationVMPatch)
	if len(value) > vm.MaxPatchBytes {
		return field.ErrorList{field.TooLong(at, "", vm.MaxPatchBytes)}
	}
	if _, err := vm.ParsePatch(value); err != nil {
		return field.ErrorList{field.Invalid(at, value, err.Error())}
	}
	if settings == nil {
		return nil
	}
	_, err := vm.Build(vm.Input{
		Settings: settings,
		Machine:  vm.MachineInfo{Name: "admission-check", Annotations: annotations},
		Facts:    vm.Facts{Namespace: "admission-check"},
		UserData: "#cloud-config\n",
	})
	if err != nil && strings.Contains(err.Error(), vm.AnnotationVMPatch) {
		return field.ErrorList{field.Invalid(at, value, err.Error())}
	}
	return nil
}
