package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/Masterminds/semver/v3"

	"gomodules.xyz/jsonpatch/v2"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/controller/machine"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// AnnotationBypassSpecImmutability on a Machine lets one update change its
// spec; the mutating webhook removes it again (Kubermatic uses it for
// migrations).
const AnnotationBypassSpecImmutability = "kubermatic.io/bypass-no-spec-mutation-requirement"

// Kinds of cluster.k8s.io/v1alpha1 the webhook admits.
const (
	kindMachineDeployment = "MachineDeployment"
	kindMachineSet        = "MachineSet"
	kindMachine           = "Machine"
)

// admitter holds what both webhooks share.
type admitter struct {
	checker *specChecker
	decoder admission.Decoder
	// name is the controller name (machine.LabelController) of the objects
	// this webhook handles; others are admitted unchanged.
	name string
	// kubelets, when set, is the constraint kubelet versions must meet.
	kubelets *semver.Constraints
}

// owned reports whether an object's labels select this controller.
func (a *admitter) owned(obj metav1.Object) bool {
	return obj.GetLabels()[machine.LabelController] == a.name
}

// decode decodes the request's object and, on UPDATE, the old object.
func (a *admitter) decode(req admission.Request, obj, old runtime.Object) error {
	if err := a.decoder.DecodeRaw(req.Object, obj); err != nil {
		return fmt.Errorf("failed to decode the %s: %w", req.Kind.Kind, err)
	}
	if req.Operation != admissionv1.Update {
		return nil
	}
	if err := a.decoder.DecodeRaw(req.OldObject, old); err != nil {
		return fmt.Errorf("failed to decode the old %s: %w", req.Kind.Kind, err)
	}
	return nil
}

// admit decodes a request's objects, or returns the response for a
// request the webhook does not judge: other kinds and operations, objects
// of other controllers, objects being deleted.
func (a *admitter) admit(req admission.Request) (obj, old ownedObject, skip *admission.Response) {
	obj, old, ok := newObjects(req.Kind.Kind)
	if !ok || (req.Operation != admissionv1.Create && req.Operation != admissionv1.Update) {
		return nil, nil, ptr.To(admission.Allowed("not handled"))
	}
	if err := a.decode(req, obj, old); err != nil {
		return nil, nil, ptr.To(admission.Errored(http.StatusBadRequest, err))
	}
	if !a.owned(obj) || obj.GetDeletionTimestamp() != nil {
		return nil, nil, ptr.To(admission.Allowed("not handled by this controller"))
	}
	return obj, old, nil
}

// newObjects returns empty objects of the request's kind, or false for a
// kind the webhook does not admit.
func newObjects(kind string) (obj, old ownedObject, ok bool) {
	switch kind {
	case kindMachineDeployment:
		return &clusterv1alpha1.MachineDeployment{}, &clusterv1alpha1.MachineDeployment{}, true
	case kindMachineSet:
		return &clusterv1alpha1.MachineSet{}, &clusterv1alpha1.MachineSet{}, true
	case kindMachine:
		return &clusterv1alpha1.Machine{}, &clusterv1alpha1.Machine{}, true
	}
	return nil, nil, false
}

// ownedObject is a Machine, MachineSet or MachineDeployment.
type ownedObject interface {
	runtime.Object
	metav1.Object
}

// machineSpec returns the MachineSpec of an object and its field path.
func machineSpec(obj ownedObject) (*clusterv1alpha1.MachineSpec, string) {
	switch o := obj.(type) {
	case *clusterv1alpha1.MachineDeployment:
		return &o.Spec.Template.Spec, "spec.template.spec"
	case *clusterv1alpha1.MachineSet:
		return &o.Spec.Template.Spec, "spec.template.spec"
	case *clusterv1alpha1.Machine:
		return &o.Spec, "spec"
	}
	return nil, ""
}

// Mutator is the mutating webhook: it defaults providerSpecs and removes
// the one-shot bypass annotation of Machines (refusing spec changes of
// Machines without it, since the validating webhook never sees it).
type Mutator struct{ admitter }

// Handle implements admission.Handler.
func (m *Mutator) Handle(ctx context.Context, req admission.Request) admission.Response {
	obj, old, skip := m.admit(req)
	if skip != nil {
		return *skip
	}
	bypassRemoved := false
	if machineObj, isMachine := obj.(*clusterv1alpha1.Machine); isMachine && req.Operation == admissionv1.Update {
		_, hadBypass := machineObj.Annotations[AnnotationBypassSpecImmutability]
		if msgs := machineUpdate(old.(*clusterv1alpha1.Machine), machineObj); len(msgs) > 0 {
			return refuse(req, msgs)
		}
		_, hasBypass := machineObj.Annotations[AnnotationBypassSpecImmutability]
		bypassRemoved = hadBypass && !hasBypass
	}
	spec, specPath := machineSpec(obj)
	oldSpec, _ := machineSpec(old)
	_, isMachine := obj.(*clusterv1alpha1.Machine)
	// Defaults are filled when a spec is created or changed, so an owner
	// whose template did not change keeps its template hash. Any other
	// update (the controllers' finalizers, status and annotations) is
	// admitted here without the provider and without a patch.
	defaulted := false
	if req.Operation == admissionv1.Create || (!isMachine && !equality.Semantic.DeepEqual(spec, oldSpec)) {
		before := spec.DeepCopy()
		*spec = m.checker.defaults(ctx, *spec)
		defaulted = !equality.Semantic.DeepEqual(before, spec)
	}
	switch {
	case defaulted:
		return specPatch(req, obj, specPath, *spec, bypassRemoved)
	case bypassRemoved:
		return admission.Patched("", removeBypass)
	}
	return admission.Allowed("")
}

// removeBypass removes the bypass annotation of a Machine.
var removeBypass = jsonpatch.NewOperation("remove", "/metadata/annotations/"+strings.ReplaceAll(AnnotationBypassSpecImmutability, "/", "~1"), nil)

// machineUpdate applies the rules of a Machine update: spec.providerID
// never changes once set; the rest of spec changes only with the bypass
// annotation, which is removed here.
func machineUpdate(old, updated *clusterv1alpha1.Machine) []string {
	if old.Spec.ProviderID != nil && (updated.Spec.ProviderID == nil || *updated.Spec.ProviderID != *old.Spec.ProviderID) {
		return []string{"spec.providerID: Forbidden: field is immutable once set"}
	}
	if updated.Annotations[AnnotationBypassSpecImmutability] == "true" {
		delete(updated.Annotations, AnnotationBypassSpecImmutability)
		return nil
	}
	compared := old.Spec.DeepCopy()
	compared.ProviderID = updated.Spec.ProviderID
	if !equality.Semantic.DeepEqual(*compared, updated.Spec) {
		return []string{fmt.Sprintf("spec: Forbidden: the spec of a Machine is immutable (set the annotation %s: \"true\" for one update that changes it)",
			AnnotationBypassSpecImmutability)}
	}
	return nil
}

// specPatch returns the JSON patch from the request's MachineSpec (at
// specPath) to spec, with the removal of the bypass annotation when
// bypassRemoved. Only the spec is compared, so the patch costs what the
// spec's size does, however large the rest of the object is.
func specPatch(req admission.Request, obj runtime.Object, specPath string, spec clusterv1alpha1.MachineSpec, bypassRemoved bool) admission.Response {
	keys := strings.Split(specPath, ".")
	original, found := rawAt(req.Object.Raw, keys)
	if !found {
		return patch(req, obj)
	}
	current, err := json.Marshal(spec)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("failed to encode the %s: %w", req.Kind.Kind, err))
	}
	resp := admission.PatchResponseFromRaw(original, current)
	pointer := "/" + strings.Join(keys, "/")
	for i := range resp.Patches {
		resp.Patches[i].Path = pointer + resp.Patches[i].Path
	}
	if bypassRemoved && resp.Allowed {
		resp.Patches = append(resp.Patches, removeBypass)
	}
	return resp
}

// rawAt returns the JSON value at keys (object keys, outermost first) of
// the JSON object raw; false when one is missing or not in an object.
// Only the value found is copied: the objects on the way are decoded into
// structs of one field, which skip everything else.
func rawAt(raw []byte, keys []string) (json.RawMessage, bool) {
	var value json.RawMessage
	target := reflect.New(reflect.TypeFor[json.RawMessage]())
	for i := len(keys) - 1; i >= 0; i-- {
		field := reflect.StructField{Name: "F", Type: target.Type().Elem(), Tag: reflect.StructTag(`json:"` + keys[i] + `"`)}
		target = reflect.New(reflect.StructOf([]reflect.StructField{field}))
	}
	if err := json.Unmarshal(raw, target.Interface()); err != nil {
		return nil, false
	}
	v := target.Elem()
	for range keys {
		v = v.Field(0)
	}
	value = v.Interface().(json.RawMessage)
	return value, value != nil
}

// patch returns the JSON patch from the request's object to obj.
func patch(req admission.Request, obj runtime.Object) admission.Response {
	marshaled, err := json.Marshal(obj)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("failed to encode the %s: %w", req.Kind.Kind, err))
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, marshaled)
}

// Validator is the validating webhook.
type Validator struct{ admitter }

// Handle implements admission.Handler.
func (v *Validator) Handle(ctx context.Context, req admission.Request) admission.Response {
	obj, old, skip := v.admit(req)
	if skip != nil {
		return *skip
	}
	// An update that leaves the spec alone (finalizers, annotations, the
	// controllers' own writes) is never refused: what was admitted stays
	// admissible.
	if req.Operation == admissionv1.Update && equality.Semantic.DeepEqual(specOf(obj), specOf(old)) {
		return admission.Allowed("")
	}
	var out verdict
	switch o := obj.(type) {
	case *clusterv1alpha1.MachineDeployment:
		out.refuse(validateDeploymentSpec(&o.Spec))
	case *clusterv1alpha1.MachineSet:
		out.refuse(validateMachineSetSpec(&o.Spec))
	case *clusterv1alpha1.Machine:
		out.refuse(validateKubelet(field.NewPath("spec"), o.Spec.Versions.Kubelet))
	}
	spec, specPath := machineSpec(obj)
	out.refuse(kubeletAllowed(specFieldPath(specPath).Child("versions", "kubelet"), spec.Versions.Kubelet, v.kubelets))
	if spec.ProviderSpec.Value != nil {
		out.refuse(validateSSHKeys(specFieldPath(specPath).Child("providerSpec"), spec.ProviderSpec.Value.Raw))
	}
	annotations, annotationsPath := patchAnnotations(obj)
	provider, settings := v.checker.check(ctx, specPath, *spec)
	out.refuse(checkVMPatch(settings, annotations, annotationsPath))
	out.refusals = append(out.refusals, provider.refusals...)
	out.warnings = append(out.warnings, provider.warnings...)
	if len(out.refusals) > 0 {
		resp := refuse(req, out.refusals)
		resp.Warnings = out.warnings
		return resp
	}
	return admission.Allowed("").WithWarnings(out.warnings...)
}

// specOf returns the spec of a Machine, MachineSet or MachineDeployment.
func specOf(obj ownedObject) any {
	switch o := obj.(type) {
	case *clusterv1alpha1.MachineDeployment:
		return o.Spec
	case *clusterv1alpha1.MachineSet:
		return o.Spec
	case *clusterv1alpha1.Machine:
		return o.Spec
	}
	return nil
}

// refuse returns a denial in the API server's format for invalid objects:
// each message names its field path.
func refuse(req admission.Request, msgs []string) admission.Response {
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{
		UID:     req.UID,
		Allowed: false,
		Result: &metav1.Status{
			Status:  metav1.StatusFailure,
			Code:    http.StatusUnprocessableEntity,
			Reason:  metav1.StatusReasonInvalid,
			Message: fmt.Sprintf("%s %q is invalid: %s", req.Kind.Kind, req.Name, strings.Join(msgs, "; ")),
		},
	}}
}
