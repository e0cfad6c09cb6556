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
// DataVolumes), the user data Secret and the SSH Service (when the spec asks
// for one), and reports done only once the VM, the Secret, the Service and
// every DataVolume of the VM are gone. Deletions are issued only for objects
// not yet being deleted, so repeated calls cost no request while the garbage
// collector works.
func (p *Provider) Cleanup(ctx context.Context, _ *zap.SugaredLogger, machine *clusterv1alpha1.Machine, data *cloudprovider.ProviderData) (bool, error) {
	t, err := p.prepare(ctx, machine.Spec, userClientOf(data))
	if err != nil {
		return false, err
	}
	return cleanupInstance(ctx, t.infra, machine.Name, t.settings.SSHService != nil)
}

// cleanupInstance is one pass of Cleanup on the infra cluster. sshService
// tells whether the VM has an SSH Service to delete.
func cleanupInstance(ctx context.Context, c *infra.Client, name string, sshService bool) (bool, error) {
	key := ctrlruntimeclient.ObjectKey{Namespace: c.Namespace, Name: name}
	v := &kubevirtcorev1.VirtualMachine{}
	vmState, err := deleteIfPresent(ctx, c, key, v, ctrlruntimeclient.PropagationPolicy(metav1.DeletePropagationBackground))
	if err != nil {
		return false, err
	}
	companions := []ctrlruntimeclient.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: vm.UserDataSecretName(name)}},
	}
	if sshService {
		companions = append(companions, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: vm.SSHServiceName(name)}})
	}
	companionsGone := true
	for _, obj := range companions {
		gone, err := deleteCompanion(ctx, c, obj, vmState)
		if err != nil {
			return false, err
		}
		companionsGone = companionsGone && gone
	}
	var templates []string
	if vmState != notCached {
		for _, dv := range v.Spec.DataVolumeTemplates {
			templates = append(templates, dv.Name)
		}
	}
	dataVolumes, err := remainingDataVolumes(ctx, c, name, templates)
	if err != nil {
		return false, err
	}
	return vmState == notCached && companionsGone && dataVolumes == 0, nil
}

// deleteCompanion deletes an object created before the VM (the user data
// Secret, the SSH Service) and reports whether the cache shows it gone.
// Such an object is created before its VM, but the informers are
// independent: a cache that shows the VM may not show the object yet. The
// pass that deletes the VM (vmState deleteSent) therefore deletes the
// object without asking the cache; later passes trust it again.
func deleteCompanion(ctx context.Context, c *infra.Client, obj ctrlruntimeclient.Object, vmState deletion) (bool, error) {
	key := ctrlruntimeclient.ObjectKeyFromObject(obj)
	state, err := deleteIfPresent(ctx, c, key, obj)
	if err != nil {
		return false, err
	}
	if vmState == deleteSent && state == notCached {
		if err := c.Writer.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("failed to delete %T %s: %w", obj, key, err)
		}
		return false, nil
	}
	return state == notCached, nil
}

// deletion is what deleteIfPresent found and did.
type deletion int

const (
	// notCached: the cache does not hold the object.
	notCached deletion = iota
	// terminating: the object is already being deleted.
	terminating
	// deleteSent: this call sent the deletion.
	deleteSent
)

// deleteIfPresent reads obj from the cache and deletes it unless it is gone
// or already being deleted.
func deleteIfPresent(ctx context.Context, c *infra.Client, key ctrlruntimeclient.ObjectKey, obj ctrlruntimeclient.Object, opts ...ctrlruntimeclient.DeleteOption) (deletion, error) {
	kind := fmt.Sprintf("%T", obj)
	if err := c.Reader.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return notCached, nil
		}
		return notCached, fmt.Errorf("failed to get %s %s: %w", kind, key, err)
	}
	// Being deleted, or deleted by an earlier pass and not yet gone from
	// the cache.
	if obj.GetDeletionTimestamp() != nil || c.DeleteSent(obj.GetUID()) {
		return terminating, nil
	}
	if err := c.Writer.Delete(ctx, obj, opts...); err != nil && !apierrors.IsNotFound(err) {
		return deleteSent, fmt.Errorf("failed to delete %s %s: %w", kind, key, err)
	}
	c.Deleted(obj.GetUID())
	return deleteSent, nil
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
