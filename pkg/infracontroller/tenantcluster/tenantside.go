package tenantcluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/csinodeplugin"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/storageclass"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantconn"
	remotekubeconfig "github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"
)

// OwnerEvents records the storage-class controller's events.
var _ storageclass.EventSink = (*OwnerEvents)(nil)

// TenantObjects is the TenantCleanup of the infra-controller: it deletes
// the StorageClasses and VolumeSnapshotClasses the storage-class controller
// made and the objects of the addons, each only when it carries
// tenant.ManagedByLabel. The snapshot CRDs it may have installed stay:
// deleting a CRD would delete the tenant's VolumeSnapshots.
type TenantObjects struct {
	// Clients connects to tenant clusters; they must map TenantKinds.
	Clients *tenantconn.Clients
	// Tenants gives the namespace prefix, which the addons' cluster id
	// follows.
	Tenants tenant.Matcher
	// Addons are the addon directories applied to tenant clusters.
	Addons []string
}

// TenantKinds are the kinds TenantObjects deletes: StorageClasses,
// VolumeSnapshotClasses and the kinds the addon dirs render.
func TenantKinds(dirs []string) ([]tenantconn.Kind, error) {
	kinds := []tenantconn.Kind{{GVK: storagev1.SchemeGroupVersion.WithKind("StorageClass")}, {GVK: storageclass.SnapshotClassGVK}}
	for _, dir := range dirs {
		k, err := csinodeplugin.Kinds(dir)
		if err != nil {
			return nil, err
		}
		kinds = append(kinds, k...)
	}
	return kinds, nil
}

// Clean deletes our objects in the tenant cluster of namespace, addon
// objects in reverse apply order after the storage classes, and counts the
// ones still there. A namespace being deleted counts as gone: the tenant
// cluster's namespace controller empties it.
func (t *TenantObjects) Clean(ctx context.Context, namespace string, kubeconfig []byte) (int, error) {
	c, err := t.Clients.Get(namespace, kubeconfig)
	if errors.Is(err, remotekubeconfig.ErrInvalid) {
		// No controller could have reached the tenant cluster with it
		// either: there is nothing to clean.
		log.FromContext(ctx).Info("the tenant kubeconfig does not parse; nothing to clean in the tenant cluster")
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	left, err := deleteClasses(ctx, c)
	if err != nil {
		return left, err
	}
	snapshotClasses, err := deleteSnapshotClasses(ctx, c)
	left += snapshotClasses
	if err != nil {
		return left, err
	}
	objs, err := t.addonObjects(namespace)
	if err != nil {
		return left, err
	}
	var errs []error
	for _, obj := range slices.Backward(objs) {
		pending, err := deleteManaged(ctx, c, obj)
		if pending {
			left++
		}
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return left, err
	}
	if left == 0 {
		t.Clients.Forget(namespace)
	}
	return left, nil
}

// addonObjects renders the addons of the tenant cluster of namespace.
func (t *TenantObjects) addonObjects(namespace string) ([]*unstructured.Unstructured, error) {
	p := addons.Params{ClusterID: strings.TrimPrefix(namespace, t.Tenants.Prefix), InfraNamespace: namespace}
	var out []*unstructured.Unstructured
	for _, dir := range t.Addons {
		objs, err := addons.Render(dir, p)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// deleteClasses deletes the managed StorageClasses of a tenant cluster and
// returns how many there were.
func deleteClasses(ctx context.Context, c ctrlruntimeclient.Client) (int, error) {
	return deleteAllManaged(ctx, c, &storagev1.StorageClassList{}, "StorageClass")
}

// deleteSnapshotClasses deletes the managed VolumeSnapshotClasses of a
// tenant cluster and returns how many there were.
func deleteSnapshotClasses(ctx context.Context, c ctrlruntimeclient.Client) (int, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(storageclass.SnapshotClassGVK.GroupVersion().WithKind(storageclass.SnapshotClassGVK.Kind + "List"))
	return deleteAllManaged(ctx, c, list, storageclass.SnapshotClassGVK.Kind)
}

// deleteAllManaged deletes the objects of list's kind that carry our
// label and returns how many there were; none in a tenant cluster that
// does not serve the kind.
func deleteAllManaged(ctx context.Context, c ctrlruntimeclient.Client, list ctrlruntimeclient.ObjectList, kind string) (int, error) {
	err := c.List(ctx, list, ctrlruntimeclient.MatchingLabels{tenant.ManagedByLabel: tenant.ManagedByValue})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("failed to list the tenant's %s objects: %w", kind, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return 0, fmt.Errorf("failed to read the list of %s objects: %w", kind, err)
	}
	var errs []error
	for _, item := range items {
		obj, ok := item.(ctrlruntimeclient.Object)
		if !ok {
			return 0, fmt.Errorf("unexpected %T in the list of %s objects", item, kind)
		}
		errs = append(errs, tenant.Target(c, c, c).Delete(ctx, obj, "an object of a deleted TenantCluster"))
	}
	return len(items), errors.Join(errs...)
}

// deleteManaged deletes obj when it exists and is ours; pending is true
// while it is still there.
func deleteManaged(ctx context.Context, c ctrlruntimeclient.Client, want *unstructured.Unstructured) (pending bool, err error) {
	have := &unstructured.Unstructured{}
	have.SetGroupVersionKind(want.GroupVersionKind())
	err = c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(want), have)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("failed to get %s %s: %w", want.GetKind(), want.GetName(), err)
	case !tenant.IsManaged(have):
		return false, nil
	case have.GetDeletionTimestamp() != nil:
		return have.GetKind() != "Namespace", nil
	}
	if err := tenant.Target(c, c, c).Delete(ctx, have, "an object of a deleted TenantCluster"); err != nil {
		return false, err
	}
	return true, nil
}
