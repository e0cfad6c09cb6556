package vm

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	jsonpatch "github.com/evanphx/json-patch/v5"
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"k8s.io/apimachinery/pkg/api/equality"
)

// AnnotationVMPatch on a Machine holds an RFC 6902 JSON patch applied to
// the VirtualMachine the builder makes: the way to set a KubeVirt field no
// providerSpec option covers. Set it in a MachineDeployment's
// spec.template.metadata.annotations: it reaches every Machine, and a
// change rolls the MachineDeployment like any template change.
const AnnotationVMPatch = "kkp-kubevirt.io/vm-patch"

// maxPatchOperations bounds the operations of one patch.
const maxPatchOperations = 100

// MaxPatchBytes bounds the annotation, checked before it is decoded: 100
// operations of a path and a value take a few KB.
const MaxPatchBytes = 64 << 10

// ParsePatch decodes the patch of AnnotationVMPatch; the decoder refuses
// operations other than RFC 6902's and operations without a path. What it
// may touch is checked when it is applied.
func ParsePatch(value string) (jsonpatch.Patch, error) {
	if len(value) > MaxPatchBytes {
		return nil, fmt.Errorf("annotation %s: %d bytes, at most %d allowed", AnnotationVMPatch, len(value), MaxPatchBytes)
	}
	patch, err := jsonpatch.DecodePatch([]byte(value))
	if err != nil {
		return nil, fmt.Errorf("annotation %s: not an RFC 6902 JSON patch: %w", AnnotationVMPatch, err)
	}
	if len(patch) > maxPatchOperations {
		return nil, fmt.Errorf("annotation %s: %d operations, at most %d allowed", AnnotationVMPatch, len(patch), maxPatchOperations)
	}
	return patch, nil
}

// applyPatch applies the Machine's AnnotationVMPatch, if any, to vm. The
// patched VM must keep what the provider relies on: its kind, name and
// namespace, owner references, the labels the builder set on it and on its
// template, and the cloud-init volume.
func applyPatch(in Input, vm *kubevirtcorev1.VirtualMachine) (*kubevirtcorev1.VirtualMachine, error) {
	value, ok := in.Machine.Annotations[AnnotationVMPatch]
	if !ok {
		return vm, nil
	}
	patch, err := ParsePatch(value)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(vm)
	if err != nil {
		return nil, fmt.Errorf("failed to encode VirtualMachine %s: %w", vm.Name, err)
	}
	patched, err := patch.ApplyWithOptions(raw, &jsonpatch.ApplyOptions{EnsurePathExistsOnAdd: true})
	if err != nil {
		return nil, fmt.Errorf("annotation %s: failed to apply to VirtualMachine %s: %w", AnnotationVMPatch, vm.Name, err)
	}
	out := &kubevirtcorev1.VirtualMachine{}
	if err := json.Unmarshal(patched, out); err != nil {
		return nil, fmt.Errorf("annotation %s: the patched VirtualMachine %s is not one: %w", AnnotationVMPatch, vm.Name, err)
	}
	if err := noLostFields(patched, out); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", AnnotationVMPatch, err)
	}
	if err := keptIdentity(vm, out); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", AnnotationVMPatch, err)
	}
	return out, nil
}

// keptIdentity returns an error naming what of was the patch changed that
// it must not.
func keptIdentity(was, is *kubevirtcorev1.VirtualMachine) error {
	switch {
	case was.APIVersion != is.APIVersion || was.Kind != is.Kind:
		return errors.New("must not change apiVersion or kind")
	case was.Name != is.Name || was.Namespace != is.Namespace:
		return errors.New("must not change metadata.name or metadata.namespace")
	case !equality.Semantic.DeepEqual(was.OwnerReferences, is.OwnerReferences):
		return errors.New("must not change metadata.ownerReferences")
	case is.Spec.Template == nil:
		return errors.New("must not remove spec.template")
	}
	if key, ok := changedLabel(was.Labels, is.Labels); ok {
		return fmt.Errorf("must not change label %s of metadata.labels", key)
	}
	if key, ok := changedLabel(was.Spec.Template.ObjectMeta.Labels, is.Spec.Template.ObjectMeta.Labels); ok {
		return fmt.Errorf("must not change label %s of spec.template.metadata.labels", key)
	}
	if !equality.Semantic.DeepEqual(volume(was, CloudInitDiskName), volume(is, CloudInitDiskName)) {
		return fmt.Errorf("must not change volume %s of spec.template.spec.volumes", CloudInitDiskName)
	}
	return nil
}

// changedLabel returns a label of was that is missing or different in is.
func changedLabel(was, is map[string]string) (string, bool) {
	for k, v := range was {
		if got, ok := is[k]; !ok || got != v {
			return k, true
		}
	}
	return "", false
}

// volume returns the volume called name of vm's template, or nil.
func volume(vm *kubevirtcorev1.VirtualMachine, name string) *kubevirtcorev1.Volume {
	for i := range vm.Spec.Template.Spec.Volumes {
		if vm.Spec.Template.Spec.Volumes[i].Name == name {
			return &vm.Spec.Template.Spec.Volumes[i]
		}
	}
	return nil
}

// noLostFields compares patched with the encoding of what it decoded to:
// a field that is gone is one KubeVirt's types do not have (the API server
// would drop it too), or a default value that has no effect.
func noLostFields(patched []byte, decoded *kubevirtcorev1.VirtualMachine) error {
	var before, after any
	if err := json.Unmarshal(patched, &before); err != nil {
		return fmt.Errorf("failed to decode the patched VirtualMachine: %w", err)
	}
	raw, err := json.Marshal(decoded)
	if err != nil {
		return fmt.Errorf("failed to encode the patched VirtualMachine: %w", err)
	}
	if err := json.Unmarshal(raw, &after); err != nil {
		return fmt.Errorf("failed to decode the patched VirtualMachine: %w", err)
	}
	if path, ok := lostField("", before, after); ok {
		return fmt.Errorf("field %s is not a field of a KubeVirt VirtualMachine, or sets a default that has no effect", path)
	}
	return nil
}

// lostField returns the first path of before that is missing from after.
func lostField(path string, before, after any) (string, bool) {
	switch b := before.(type) {
	case map[string]any:
		a, ok := after.(map[string]any)
		if !ok {
			return path, len(b) > 0
		}
		for _, k := range slices.Sorted(maps.Keys(b)) {
			v, ok := a[k]
			if !ok {
				return path + "." + k, true
			}
			if p, lost := lostField(path+"."+k, b[k], v); lost {
				return p, true
			}
		}
	case []any:
		a, ok := after.([]any)
		if !ok || len(a) != len(b) {
			return path, len(b) > 0
		}
		for i := range b {
			if p, lost := lostField(fmt.Sprintf("%s[%d]", path, i), b[i], a[i]); lost {
				return p, true
			}
		}
	}
	return "", false
}
