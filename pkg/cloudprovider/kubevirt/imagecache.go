package kubevirt

import (
	"context"
	"fmt"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/imagecache"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// ensureImageCache returns the name of the cache DataVolume the root disk
// clones, creating the DataVolume when the namespace has none for the
// image's (URL, storage class). It reads only metadata, through the same
// informer Cleanup uses. It returns "" (import directly) when the primary
// disk is not pre-allocated, when a DataVolume of that name lacks the cache
// label (someone else's), is being deleted, or is larger than the disk,
// which a clone cannot shrink to.
func ensureImageCache(ctx context.Context, c *infra.Client, in vm.Input) (string, error) {
	desired, err := vm.CacheDataVolume(in)
	if err != nil || desired == nil {
		return "", err
	}
	key := ctrlruntimeclient.ObjectKeyFromObject(desired)
	current := &metav1.PartialObjectMetadata{}
	current.SetGroupVersionKind(dvGVK)
	err = c.Reader.Get(ctx, key, current)
	if apierrors.IsNotFound(err) {
		err = c.Writer.Create(ctx, desired.DeepCopy())
		if err == nil {
			return desired.Name, nil
		}
		if apierrors.IsAlreadyExists(err) {
			err = c.Writer.Get(ctx, key, current)
		}
	}
	if err != nil {
		return "", fmt.Errorf("failed to ensure the image cache DataVolume %s: %w", key, err)
	}
	if !usableCache(current, in.Settings.PrimaryDisk.Size) {
		return "", nil
	}
	return current.Name, nil
}

// usableCache reports whether a disk of size can clone the DataVolume dv.
func usableCache(dv *metav1.PartialObjectMetadata, size resource.Quantity) bool {
	if dv.Labels[imagecache.Label] != imagecache.KindHTTP || dv.DeletionTimestamp != nil {
		return false
	}
	cached, err := resource.ParseQuantity(dv.Annotations[imagecache.SizeAnnotation])
	return err == nil && cached.Cmp(size) <= 0
}
