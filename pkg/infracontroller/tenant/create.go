package tenant

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Created tells what Create found.
type Created int

const (
	// CreatedNow means the object was created.
	CreatedNow Created = iota
	// CreatedBefore means an object of ours was already there; a cache that
	// has not caught up with our own earlier write did not show it.
	CreatedBefore
	// Foreign means an object of the same name that is not ours is in the way;
	// it is left alone.
	Foreign
)

// Create creates obj. When the API server refuses it as already there,
// the object in the way is read through live, an uncached reader, and
// ownership is decided by IsManaged, the one rule every controller of the
// infra-controller follows: only an object without our label is reported
// as foreign (logged once per call, never an error).
func Create(ctx context.Context, live ctrlruntimeclient.Reader, w ctrlruntimeclient.Writer, obj ctrlruntimeclient.Object) (Created, error) {
	err := w.Create(ctx, obj)
	if err == nil {
		return CreatedNow, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return CreatedNow, fmt.Errorf("failed to create %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
	}
	have, ok := obj.DeepCopyObject().(ctrlruntimeclient.Object)
	if !ok {
		return Foreign, fmt.Errorf("failed to copy %T", obj)
	}
	if err := live.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(obj), have); err != nil {
		if apierrors.IsNotFound(err) {
			// Deleted in between; the next reconcile creates it.
			return CreatedBefore, nil
		}
		return Foreign, fmt.Errorf("failed to read %T %s/%s, which is in the way: %w", obj, obj.GetNamespace(), obj.GetName(), err)
	}
	if IsManaged(have) {
		log.FromContext(ctx).V(1).Info("already created; the cache had not caught up", "kind", fmt.Sprintf("%T", obj), "name", obj.GetName())
		return CreatedBefore, nil
	}
	log.FromContext(ctx).Info("leaving an object we did not create alone", "kind", fmt.Sprintf("%T", obj), "namespace", obj.GetNamespace(), "name", obj.GetName())
	return Foreign, nil
}
