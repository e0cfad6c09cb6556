package apply

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Create creates obj as it is, for objects that are made once and never
// applied (a DataVolume, whose spec is immutable, or a claim whose
// creation is the decision). It returns Created, or, when the API server
// finds an object of that name, reads it through Live: Unchanged when it is
// ours (a cache behind our own write did not show it) or gone meanwhile,
// Foreign when Owned rejects it (left alone and told to InTheWay).
func (t Target) Create(ctx context.Context, obj ctrlruntimeclient.Object) (Result, error) {
	err := t.Writer.Create(ctx, obj, ctrlruntimeclient.FieldOwner(t.FieldManager))
	if err == nil {
		return Created, nil
	}
	kind := t.kindOf(obj)
	if !apierrors.IsAlreadyExists(err) {
		return Unchanged, fmt.Errorf("failed to create %s %s: %w", kind, key(obj), err)
	}
	have, ok := obj.DeepCopyObject().(ctrlruntimeclient.Object)
	if !ok {
		return Unchanged, fmt.Errorf("failed to copy %s %s", kind, key(obj))
	}
	if err := t.Live.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(obj), have); err != nil {
		if apierrors.IsNotFound(err) {
			// Deleted in between; its deletion event brings the next attempt.
			return Unchanged, nil
		}
		return Unchanged, fmt.Errorf("failed to read %s %s, which is in the way: %w", kind, key(obj), err)
	}
	if t.Owned(have) {
		log.FromContext(ctx).V(1).Info("already created; the cache had not caught up", "kind", kind, "object", key(obj))
		return Unchanged, nil
	}
	return t.leave(ctx, kind, have, inTheWayVerbosity), nil
}

// Delete deletes obj, as read, when Owned accepts it and it is not being
// deleted already, logging why. The delete names obj's uid, so an object
// re-created under the same name meanwhile is kept; that obj is gone or
// was replaced is no error.
func (t Target) Delete(ctx context.Context, obj ctrlruntimeclient.Object, why string, opts ...ctrlruntimeclient.DeleteOption) error {
	if !t.Owned(obj) || !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	kind := t.kindOf(obj)
	log.FromContext(ctx).Info("deleting "+why, "kind", kind, "object", key(obj))
	uid := obj.GetUID()
	err := t.Writer.Delete(ctx, obj, append([]ctrlruntimeclient.DeleteOption{ctrlruntimeclient.Preconditions{UID: &uid}}, opts...)...)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("failed to delete %s %s: %w", kind, key(obj), err)
	}
	return nil
}

// GetAndDelete reads key into obj through Reader and deletes what it read
// with Delete; an absent object is fine.
func (t Target) GetAndDelete(ctx context.Context, key ctrlruntimeclient.ObjectKey, obj ctrlruntimeclient.Object, why string, opts ...ctrlruntimeclient.DeleteOption) error {
	err := t.Reader.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to get %s %s: %w", t.kindOf(obj), key, err)
	}
	return t.Delete(ctx, obj, why, opts...)
}

// kindOf names the kind of obj in logs and errors: its own when set, the
// scheme's for a typed object, else its Go type.
func (t Target) kindOf(obj ctrlruntimeclient.Object) string {
	if kind := obj.GetObjectKind().GroupVersionKind().Kind; kind != "" {
		return kind
	}
	if gvks, _, err := t.scheme().ObjectKinds(obj); err == nil && len(gvks) > 0 {
		return gvks[0].Kind
	}
	return fmt.Sprintf("%T", obj)
}
