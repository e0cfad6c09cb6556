package vlan

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/networks"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// The release rule: the claim of a TenantCluster that is gone is deleted
// when its tenant namespace is gone (namespace deletion ends only after
// every VM, VMI and virt-launcher pod in it), or when the namespace
// exists, is not terminating and no VirtualMachine or
// VirtualMachineInstance in it names the network; our
// NetworkAttachmentDefinition there is deleted first and the VMs and VMIs
// are looked at again after that, so a VM created meanwhile is seen, and
// one created later cannot start on the VLAN without the definition. A
// terminating namespace keeps the claim until it is gone. While a
// TenantCluster exists, even one being deleted, its claim stays.

// vmKinds are the kinds whose objects may use a network: a VM's template
// and a running VMI.
var vmKinds = []struct {
	gvk  schema.GroupVersionKind
	path []string
}{
	{schema.GroupVersionKind{Group: "kubevirt.io", Version: "v1", Kind: "VirtualMachineList"}, []string{"spec", "template", "spec", "networks"}},
	{schema.GroupVersionKind{Group: "kubevirt.io", Version: "v1", Kind: "VirtualMachineInstanceList"}, []string{"spec", "networks"}},
}

// release deletes the claims whose namespace no VM can use the id from
// any more and asks to be called again while some still wait.
func (r *Reconciler) release(ctx context.Context, claims []claim) (reconcile.Result, error) {
	var errs []error
	waiting := false
	for _, c := range claims {
		released, err := r.releaseOne(ctx, c)
		errs = append(errs, err)
		waiting = waiting || (!released && err == nil)
	}
	if err := errors.Join(errs...); err != nil {
		return reconcile.Result{}, err
	}
	if waiting {
		return reconcile.Result{RequeueAfter: r.releaseRecheck()}, nil
	}
	return reconcile.Result{}, nil
}

// releaseOne deletes claim c when the release rule allows it.
func (r *Reconciler) releaseOne(ctx context.Context, c claim) (bool, error) {
	logger := log.FromContext(ctx).WithValues("vlan", c.id, "tenantNamespace", c.namespace)
	var ns corev1.Namespace
	err := r.Reader.Get(ctx, types.NamespacedName{Name: c.namespace}, &ns)
	switch {
	case apierrors.IsNotFound(err) || c.namespace == "":
		return true, r.deleteClaim(ctx, c)
	case err != nil:
		return false, fmt.Errorf("failed to get namespace %s: %w", c.namespace, err)
	case !ns.DeletionTimestamp.IsZero():
		logger.V(1).Info("Keeping the VLAN claim while the namespace terminates")
		return false, nil
	}
	if used, err := r.inUse(ctx, c.namespace); used || err != nil {
		logger.V(1).Info("Keeping the VLAN claim while VMs use the network")
		return false, err
	}
	if err := r.deleteAttachment(ctx, c); err != nil {
		return false, err
	}
	if used, err := r.inUse(ctx, c.namespace); used || err != nil {
		return false, err
	}
	return true, r.deleteClaim(ctx, c)
}

// inUse reports whether a VM or VMI in namespace names the network, as
// "<name>" or "<namespace>/<name>". Without KubeVirt's kinds nothing uses
// it.
func (r *Reconciler) inUse(ctx context.Context, namespace string) (bool, error) {
	name := r.Options.networkName()
	for _, k := range vmKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(k.gvk)
		if err := r.APIReader.List(ctx, list, ctrlruntimeclient.InNamespace(namespace)); err != nil {
			if meta.IsNoMatchError(err) {
				continue
			}
			return false, fmt.Errorf("failed to list the %s in %s: %w", k.gvk.Kind, namespace, err)
		}
		for i := range list.Items {
			if usesNetwork(list.Items[i].Object, k.path, namespace, name) {
				return true, nil
			}
		}
	}
	return false, nil
}

// usesNetwork reports whether the networks at path of obj name the Multus
// network namespace/name.
func usesNetwork(obj map[string]any, path []string, namespace, name string) bool {
	nets, _, _ := unstructured.NestedSlice(obj, path...)
	for _, n := range nets {
		network, ok := n.(map[string]any)
		if !ok {
			continue
		}
		ref, _, _ := unstructured.NestedString(network, "multus", "networkName")
		if ref == name || ref == namespace+"/"+name {
			return true
		}
	}
	return false
}

// deleteAttachment deletes our NetworkAttachmentDefinition of c's id in
// its namespace, if it is there.
func (r *Reconciler) deleteAttachment(ctx context.Context, c claim) error {
	have := &unstructured.Unstructured{}
	have.SetGroupVersionKind(networks.NetworkAttachmentDefinitionGVK)
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: c.namespace, Name: r.Options.networkName()}, have)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to get NetworkAttachmentDefinition %s/%s: %w", c.namespace, r.Options.networkName(), err)
	}
	if !tenant.IsManaged(have) || have.GetLabels()[networks.Label] != LabelValue || have.GetLabels()[VLANLabel] != strconv.Itoa(c.id) {
		return nil
	}
	return tenant.Target(r.APIReader, r.APIReader, r.Writer).Delete(ctx, have, "the network of a released VLAN")
}

// deleteClaim deletes the claim c, which frees its id.
func (r *Reconciler) deleteClaim(ctx context.Context, c claim) error {
	//writepath:direct a conflict means another TenantCluster holds the id now, which must not be logged as released
	err := r.Writer.Delete(ctx, c.lease, ctrlruntimeclient.Preconditions{UID: ptr.To(c.lease.UID)})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("failed to release VLAN %d (claim %s/%s): %w", c.id, c.lease.Namespace, c.lease.Name, err)
	}
	log.FromContext(ctx).Info("Released a VLAN", "vlan", c.id, "tenantNamespace", c.namespace)
	return nil
}

func (r *Reconciler) releaseRecheck() time.Duration {
	if r.ReleaseRecheck > 0 {
		return r.ReleaseRecheck
	}
	return DefaultReleaseRecheck
}
