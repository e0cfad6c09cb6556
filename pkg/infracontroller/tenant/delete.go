package tenant

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// GetAndDeleteOurs reads key into obj with reader and deletes that
// version with DeleteOurs; an absent object is fine.
func GetAndDeleteOurs(ctx context.Context, reader ctrlruntimeclient.Reader, writer ctrlruntimeclient.Writer, key ctrlruntimeclient.ObjectKey,
	obj ctrlruntimeclient.Object, why string, opts ...ctrlruntimeclient.DeleteOption,
) error {
	err := reader.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to get %T %s: %w", obj, key, err)
	}
	return DeleteOurs(ctx, writer, obj, why, opts...)
}

// DeleteOurs deletes obj, as read, when it carries ManagedByLabel and is
// not being deleted already, logging why. The UID precondition keeps a
// re-created object of the same name; that it is gone or was replaced
// meanwhile is no error.
func DeleteOurs(ctx context.Context, writer ctrlruntimeclient.Writer, obj ctrlruntimeclient.Object, why string, opts ...ctrlruntimeclient.DeleteOption) error {
	if !IsManaged(obj) || !obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	key := ctrlruntimeclient.ObjectKeyFromObject(obj)
	log.FromContext(ctx).Info("deleting "+why, "kind", fmt.Sprintf("%T", obj), "object", key.String())
	uid := obj.GetUID()
	err := writer.Delete(ctx, obj, append([]ctrlruntimeclient.DeleteOption{ctrlruntimeclient.Preconditions{UID: &uid}}, opts...)...)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("failed to delete %T %s: %w", obj, key, err)
	}
	return nil
}
