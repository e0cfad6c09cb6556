package kubevirt

import (
	"context"
	"fmt"
	"slices"

	"go.uber.org/zap"
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// Cleanup implements cloudprovider.Provider. It deletes the VirtualMachine
// (in the background: the infra garbage collector then deletes its VMI and
// DataVolumes) and the user data Secret, and reports done only once the VM,
// the Secret and every DataVolume of the VM are gone. Deletions are issued
// only for objects not yet being deleted, so repeated calls cost no request
// while the garbage collector works.
func (p *Provider) Cleanup(ctx context.Context, _ *zap.SugaredLogger, machine *clusterv1alpha1.Machine, data *cloudprovider.ProviderData) (bool, error) {
	t, err := p.prepare(ctx, machine.Spec, userClientOf(data))
	if err != nil {
		return false, err
	}
	c := t.infra
	key := ctrlruntimeclient.ObjectKey{Namespace: c.Namespace, Name: machine.Name}

	v := &kubevirtcorev1.VirtualMachine{}
	vmGone, err := deleteIfPresent(ctx, c, key, v, ctrlruntimeclient.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil {
		return false, err
	}
	secretKey := ctrlruntimeclient.ObjectKey{Namespace: c.Namespace, Name: vm.UserDataSecretName(machine.Name)}
	secretGone, err := deleteIfPresent(ctx, c, secretKey, &corev1.Secret{})
	if err != nil {
		return false, err
	}
	var templates []string
	if !vmGone {
		for _, dv := range v.Spec.DataVolumeTemplates {
			templates = append(templates, dv.Name)
		}
	}
	dataVolumes, err := remainingDataVolumes(ctx, c, machine.Name, templates)
	if err != nil {
		return false, err
	}
	return vmGone && secretGone && dataVolumes == 0, nil
}

// deleteIfPresent reads obj from the cache and deletes it unless it is gone
// or already being deleted. It reports whether the object is gone.
func deleteIfPresent(ctx context.Context, c *infra.Client, key ctrlruntimeclient.ObjectKey, obj ctrlruntimeclient.Object, opts ...ctrlruntimeclient.DeleteOption) (bool, error) {
	kind := fmt.Sprintf("%T", obj)
	if err := c.Reader.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("failed to get %s %s: %w", kind, key, err)
	}
	if obj.GetDeletionTimestamp() != nil {
		return false, nil
	}
	if err := c.Writer.Delete(ctx, obj, opts...); err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("failed to delete %s %s: %w", kind, key, err)
	}
	return false, nil
}

// remainingDataVolumes counts the DataVolumes of a VM that still exist: the
// ones named by its DataVolumeTemplates and any owned by a VirtualMachine of
// that name (which finds them after the VM is gone).
func remainingDataVolumes(ctx context.Context, c *infra.Client, vmName string, names []string) (int, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(dvGVK.GroupVersion().WithKind(dvGVK.Kind + "List"))
	if err := c.Reader.List(ctx, list, ctrlruntimeclient.InNamespace(c.Namespace)); err != nil {
		return 0, fmt.Errorf("failed to list DataVolumes: %w", err)
	}
	n := 0
	for _, dv := range list.Items {
		if slices.Contains(names, dv.Name) || slices.ContainsFunc(dv.OwnerReferences, func(ref metav1.OwnerReference) bool {
			return isVMRef(ref, vmName)
		}) {
			n++
		}
	}
	return n, nil
}
