package infra

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// errSyncTimeout is reported when an informer did not sync in time and no
// list/watch error tells why.
var errSyncTimeout = errors.New("timed out")

// cachedReader reads from informers: namespaced kinds from the cache of the
// client's namespace, cluster-scoped kinds from the connection-wide cache.
// Reads of another namespace go to the API server directly, since no
// informer watches it. Kinds the infra cluster does not serve read as
// NotFound (Get) or as an empty list (List).
type cachedReader struct {
	conn      *connection
	namespace string
	cache     cache.Cache
}

var _ ctrlruntimeclient.Reader = &cachedReader{}

// Get implements client.Reader.
func (r *cachedReader) Get(ctx context.Context, key ctrlruntimeclient.ObjectKey, obj ctrlruntimeclient.Object, opts ...ctrlruntimeclient.GetOption) error {
	gvk, err := apiutil.GVKForObject(obj, r.conn.scheme)
	if err != nil {
		return fmt.Errorf("failed to find the kind of %T: %w", obj, err)
	}
	ca, direct, err := r.route(gvk, key.Namespace)
	switch {
	case err != nil:
		return err
	case direct:
		return r.conn.writer.Get(ctx, key, obj, opts...)
	case ca == nil:
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, key.Name)
	}
	if err := r.conn.ensureSynced(ctx, ca, obj, gvk); err != nil {
		return err
	}
	return ca.Get(ctx, key, obj, opts...)
}

// List implements client.Reader.
func (r *cachedReader) List(ctx context.Context, list ctrlruntimeclient.ObjectList, opts ...ctrlruntimeclient.ListOption) error {
	gvk, err := apiutil.GVKForObject(list, r.conn.scheme)
	if err != nil {
		return fmt.Errorf("failed to find the kind of %T: %w", list, err)
	}
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	listOpts := (&ctrlruntimeclient.ListOptions{}).ApplyOptions(opts)
	ca, direct, err := r.route(gvk, listOpts.Namespace)
	switch {
	case err != nil:
		return err
	case direct:
		return r.conn.writer.List(ctx, list, opts...)
	case ca == nil:
		return meta.SetList(list, nil)
	}
	item, err := r.itemOf(list, gvk)
	if err != nil {
		return err
	}
	if err := r.conn.ensureSynced(ctx, ca, item, gvk); err != nil {
		return err
	}
	return ca.List(ctx, list, opts...)
}

// route picks the cache for a kind and namespace: nil when the kind is not
// served, direct when the namespace is not the cached one.
func (r *cachedReader) route(gvk schema.GroupVersionKind, namespace string) (ca cache.Cache, direct bool, err error) {
	served, namespaced, err := r.conn.scope(gvk)
	if err != nil || !served {
		return nil, false, err
	}
	if !namespaced {
		return r.conn.clusterCache, false, nil
	}
	if namespace != r.namespace {
		return nil, true, nil
	}
	return r.cache, false, nil
}

// ensureSynced starts the informer of obj's kind if needed and waits for it
// to sync, at most SyncTimeout. An informer that does not sync in time is
// removed, so the next read starts a fresh one instead of waiting on a
// failing one again.
func (c *connection) ensureSynced(ctx context.Context, ca cache.Cache, obj ctrlruntimeclient.Object, gvk schema.GroupVersionKind) error {
	informer, err := ca.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	if err != nil {
		return fmt.Errorf("failed to start the infra informer for %s: %w", gvk.Kind, err)
	}
	if informer.HasSynced() {
		return nil
	}
	waitCtx, cancel := context.WithTimeout(ctx, c.opts.SyncTimeout)
	defer cancel()
	if toolscache.WaitForCacheSync(waitCtx.Done(), informer.HasSynced) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("failed to sync the infra cache of %s: %w", gvk.Kind, err)
	}
	_ = ca.RemoveInformer(context.WithoutCancel(ctx), obj)
	cause := c.LastWatchError()
	if cause == nil {
		cause = errSyncTimeout
	}
	return fmt.Errorf("failed to sync the infra cache of %s within %s: %w", gvk.Kind, c.opts.SyncTimeout.Round(time.Millisecond), cause)
}

// itemOf returns an empty object of the kind a list holds, which names the
// informer to start.
func (r *cachedReader) itemOf(list ctrlruntimeclient.ObjectList, gvk schema.GroupVersionKind) (ctrlruntimeclient.Object, error) {
	switch list.(type) {
	case *metav1.PartialObjectMetadataList:
		item := &metav1.PartialObjectMetadata{}
		item.SetGroupVersionKind(gvk)
		return item, nil
	case *unstructured.UnstructuredList:
		item := &unstructured.Unstructured{}
		item.SetGroupVersionKind(gvk)
		return item, nil
	}
	obj, err := r.conn.scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("failed to create an item of %T: %w", list, err)
	}
	item, ok := obj.(ctrlruntimeclient.Object)
	if !ok {
		return nil, fmt.Errorf("%T is not an object", obj)
	}
	return item, nil
}
