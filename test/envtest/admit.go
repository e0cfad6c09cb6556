package envtest

import (
	"context"
	"errors"
	"fmt"

	kubevirtcorev1 "kubevirt.io/api/core/v1"
	instancetypeapi "kubevirt.io/api/instancetype"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// AdmitVM submits a VirtualMachine to KubeVirt's admission (the control plane
// must run WithKubeVirt) as a server-side dry run, after creating what it
// references that does not exist yet: its namespace, the instancetype and
// preference it names (as small as KubeVirt accepts), the namespaces its
// DataVolumes clone from, and for an instancetype or preference inferred
// from a volume the image PVC that volume clones, labelled with what to
// infer. Then each DataVolume virt-controller would create for the VM,
// made by virt-controller's own code, goes through CDI's admission the
// same way. The error carries KubeVirt's or CDI's message; v is left as
// KubeVirt defaults it.
func (e *Env) AdmitVM(ctx context.Context, v *kubevirtcorev1.VirtualMachine) error {
	if err := e.createReferences(ctx, v); err != nil {
		return err
	}
	if err := e.Client.Create(ctx, v, ctrlruntimeclient.DryRunAll); err != nil {
		return err
	}
	if e.kubeVirtTool == nil {
		return errors.New("AdmitVM needs a control plane started WithKubeVirt")
	}
	dvs, err := e.kubeVirtTool.dataVolumes(ctx, v)
	if err != nil {
		return err
	}
	for _, dv := range dvs {
		if err := e.Client.Create(ctx, dv, ctrlruntimeclient.DryRunAll); err != nil {
			return fmt.Errorf("DataVolume %s, which virt-controller makes of the VM's template: %w", dv.Name, err)
		}
	}
	return nil
}

// Names of what an image PVC's labels tell KubeVirt to infer.
const (
	inferredInstancetype = "inferred-type"
	inferredPreference   = "inferred-pref"
)

// createReferences creates the VM's namespace and the instancetype and
// preference it names, as small as KubeVirt allows, unless they exist. For
// an instancetype or preference inferred from a volume, the volume's source
// PVC carries the labels KubeVirt infers them from.
func (e *Env) createReferences(ctx context.Context, v *kubevirtcorev1.VirtualMachine) error {
	objs := []ctrlruntimeclient.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: v.Namespace}}}
	for _, tmpl := range v.Spec.DataVolumeTemplates {
		if src := tmpl.Spec.Source; src != nil && src.PVC != nil && src.PVC.Namespace != "" {
			objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: src.PVC.Namespace}})
		}
	}
	instancetypeSpec := map[string]any{"cpu": map[string]any{"guest": int64(2)}, "memory": map[string]any{"guest": "4Gi"}}
	if it := v.Spec.Instancetype; it != nil {
		name := it.Name
		if it.InferFromVolume != "" {
			name = inferredInstancetype
			pvc, err := labelledSourcePVC(v, it.InferFromVolume)
			if err != nil {
				return err
			}
			objs = append(objs, pvc...)
		}
		objs = append(objs, referenced(v.Namespace, it.Kind, "VirtualMachineInstancetype", name, instancetypeSpec))
	}
	if p := v.Spec.Preference; p != nil {
		name := p.Name
		if p.InferFromVolume != "" {
			name = inferredPreference
			pvc, err := labelledSourcePVC(v, p.InferFromVolume)
			if err != nil {
				return err
			}
			objs = append(objs, pvc...)
		}
		objs = append(objs, referenced(v.Namespace, p.Kind, "VirtualMachinePreference", name, map[string]any{}))
	}
	for _, obj := range objs {
		if err := e.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("failed to create %s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
		}
	}
	return nil
}

// referenced returns an instancetype or preference of the given kind
// (namespaced when kind is empty, as KubeVirt defaults it).
func referenced(namespace, kind, namespacedKind, name string, spec map[string]any) *unstructured.Unstructured {
	if kind == "" {
		kind = namespacedKind
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": runtime.DeepCopyJSONValue(spec)}}
	u.SetAPIVersion("instancetype.kubevirt.io/v1beta1")
	u.SetKind(kind)
	u.SetName(name)
	if kind == namespacedKind {
		u.SetNamespace(namespace)
	}
	return u
}

// labelledSourcePVC returns the namespace and the PVC a volume's
// DataVolumeTemplate clones, labelled with the default instancetype and
// preference as an image uploader would label it.
func labelledSourcePVC(v *kubevirtcorev1.VirtualMachine, volume string) ([]ctrlruntimeclient.Object, error) {
	for _, vol := range v.Spec.Template.Spec.Volumes {
		if vol.Name != volume || vol.DataVolume == nil {
			continue
		}
		for _, tmpl := range v.Spec.DataVolumeTemplates {
			if tmpl.Name != vol.DataVolume.Name || tmpl.Spec.Source == nil || tmpl.Spec.Source.PVC == nil {
				continue
			}
			src := tmpl.Spec.Source.PVC
			return []ctrlruntimeclient.Object{
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: src.Namespace}},
				&corev1.PersistentVolumeClaim{
					ObjectMeta: metav1.ObjectMeta{Namespace: src.Namespace, Name: src.Name, Labels: map[string]string{
						instancetypeapi.DefaultInstancetypeLabel:     inferredInstancetype,
						instancetypeapi.DefaultInstancetypeKindLabel: "VirtualMachineInstancetype",
						instancetypeapi.DefaultPreferenceLabel:       inferredPreference,
					}},
					Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceStorage: resource.MustParse("1Gi"),
						}},
					},
				},
			}, nil
		}
	}
	return nil, fmt.Errorf("volume %s has no DataVolumeTemplate cloning a PVC to infer from", volume)
}
