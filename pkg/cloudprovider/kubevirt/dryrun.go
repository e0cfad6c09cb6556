package kubevirt

import (
	"context"
	"errors"
	"fmt"
	"strings"

	kubevirtcorev1 "kubevirt.io/api/core/v1"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// DryRun submits the objects of one Machine to the infra cluster of its
// settings with server-side dry-run, so that the infra cluster's admission
// (KubeVirt's for the VM, CDI's for the DataVolumes, the API server's own
// validation for everything) judges them and nothing is stored. The VM's
// DataVolume templates are submitted as the DataVolumes KubeVirt would
// create from them. It returns one note per object that could not be
// judged (the infra cluster already holds it, or the identity may not
// create it) and an error naming each refusal with the infra cluster's
// reason.
func (p *Provider) DryRun(ctx context.Context, settings *config.Settings, objs *vm.Objects) ([]string, error) {
	t, err := p.targetFor(ctx, settings)
	if err != nil {
		return nil, err
	}
	var (
		notes    []string
		refusals []error
	)
	for _, obj := range dryRunObjects(objs) {
		kind, name := kindOf(obj), obj.GetName()
		err := t.infra.Writer.Create(ctx, obj, ctrlruntimeclient.DryRunAll)
		switch {
		case err == nil:
		case apierrors.IsAlreadyExists(err):
			notes = append(notes, fmt.Sprintf("%s %s/%s already exists on the infra cluster: not judged", kind, obj.GetNamespace(), name))
		case apierrors.IsForbidden(err) && !strings.Contains(err.Error(), "admission webhook"):
			// RBAC, not admission: a dry-run create needs the create
			// permission, which a read-only identity lacks.
			notes = append(notes, fmt.Sprintf("%s %s/%s not judged: %s", kind, obj.GetNamespace(), name, statusMessage(err)))
		case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsForbidden(err), apierrors.IsNotFound(err):
			refusals = append(refusals, fmt.Errorf("the infra cluster refused %s %s/%s: %s", kind, obj.GetNamespace(), name, statusMessage(err)))
		default:
			return notes, fmt.Errorf("failed to submit %s %s/%s for a dry run: %w", kind, obj.GetNamespace(), name, err)
		}
	}
	return notes, errors.Join(refusals...)
}

// dryRunObjects returns copies of what the provider would create for the
// Machine, in creation order: the user data Secret, the SSH Service, the
// DataVolumes of the VM's templates, then the VM.
func dryRunObjects(objs *vm.Objects) []ctrlruntimeclient.Object {
	out := []ctrlruntimeclient.Object{objs.UserDataSecret.DeepCopy()}
	if objs.SSHService != nil {
		out = append(out, objs.SSHService.DeepCopy())
	}
	v := objs.VirtualMachine.DeepCopy()
	for _, tmpl := range v.Spec.DataVolumeTemplates {
		dv := &cdicorev1beta1.DataVolume{ObjectMeta: *tmpl.ObjectMeta.DeepCopy(), Spec: *tmpl.Spec.DeepCopy()}
		dv.Namespace = v.Namespace
		out = append(out, dv)
	}
	return append(out, v)
}

// kindOf names the kind of obj, one of dryRunObjects'.
func kindOf(obj ctrlruntimeclient.Object) string {
	switch obj.(type) {
	case *corev1.Secret:
		return "Secret"
	case *corev1.Service:
		return "Service"
	case *cdicorev1beta1.DataVolume:
		return "DataVolume"
	case *kubevirtcorev1.VirtualMachine:
		return "VirtualMachine"
	}
	return fmt.Sprintf("%T", obj)
}

// statusMessage is the message of the API server's answer, without the
// client's prefix.
func statusMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Message
	}
	return err.Error()
}
