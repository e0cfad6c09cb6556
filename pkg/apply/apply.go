package apply

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/csaupgrade"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Result tells what Object did.
type Result int

const (
	// Unchanged means the object already held what we want, or was
	// deleted while we created it (its deletion event brings the next
	// attempt); nothing was written.
	Unchanged Result = iota
	// Created means the object was created.
	Created
	// Applied means the object was written with server-side apply.
	Applied
	// Foreign means an object of the same name that is not ours is in
	// the way; it was left alone (and logged), which is not an error.
	Foreign
)

// String returns the name of r.
func (r Result) String() string {
	switch r {
	case Unchanged:
		return "Unchanged"
	case Created:
		return "Created"
	case Applied:
		return "Applied"
	case Foreign:
		return "Foreign"
	}
	return fmt.Sprintf("Result(%d)", int(r))
}

// Target is where objects are read and written, and as whom.
type Target struct {
	// Reader reads the objects, normally a cache; it may hold only the
	// objects Owned accepts. Kinds the Scheme knows are read typed, the
	// others unstructured.
	Reader ctrlruntimeclient.Reader
	// Live reads, uncached, an object in the way of a Create, to tell ours
	// (a cache behind our own write) from a foreign one.
	Live ctrlruntimeclient.Reader
	// Writer writes the objects.
	Writer ctrlruntimeclient.Writer
	// FieldManager is the field manager of every write.
	FieldManager string
	// Owned is the ownership rule: objects it rejects are never written.
	Owned func(ctrlruntimeclient.Object) bool
	// Scheme maps typed objects to their kinds; client-go's scheme when
	// nil.
	Scheme *runtime.Scheme
	// InTheWay, when set, is told of each object of the same name that is
	// not ours and so was left alone (a Foreign result), as read, with its
	// kind: the place to tell a user, who alone can move it.
	InTheWay func(ctx context.Context, kind string, obj ctrlruntimeclient.Object)
}

func (t Target) scheme() *runtime.Scheme {
	if t.Scheme == nil {
		return clientgoscheme.Scheme
	}
	return t.Scheme
}

// Object makes the object of desired hold what desired sets: it reads the
// object from Reader and continues as Known.
func (t Target) Object(ctx context.Context, desired ctrlruntimeclient.Object) (Result, error) {
	want, err := Desired(desired, t.scheme())
	if err != nil {
		return Unchanged, err
	}
	have, err := t.empty(want)
	if err != nil {
		return Unchanged, err
	}
	err = t.Reader.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(want), have)
	if apierrors.IsNotFound(err) {
		return t.create(ctx, want)
	}
	if err != nil {
		return Unchanged, fmt.Errorf("failed to read %s %s: %w", want.GetKind(), key(want), err)
	}
	return t.update(ctx, have, want, cachedVerbosity)
}

// Known is Object for a caller that has read the object already (from a
// list of Reader); have is nil when Reader does not hold it.
func (t Target) Known(ctx context.Context, have, desired ctrlruntimeclient.Object) (Result, error) {
	want, err := Desired(desired, t.scheme())
	if err != nil {
		return Unchanged, err
	}
	if have == nil || reflect.ValueOf(have).IsNil() {
		return t.create(ctx, want)
	}
	return t.update(ctx, have, want, cachedVerbosity)
}

// The log verbosity of a foreign object: one the cache shows is met at
// every reconcile, one in the way of a Create only when the cache selects
// our objects and so rarely.
const (
	cachedVerbosity   = 1
	inTheWayVerbosity = 0
)

// empty returns an object to read want's into: typed when the scheme knows
// the kind (the informers of a cache are per Go type), else unstructured.
func (t Target) empty(want *unstructured.Unstructured) (ctrlruntimeclient.Object, error) {
	gvk := want.GroupVersionKind()
	if typed, err := t.scheme().New(gvk); err == nil {
		if obj, ok := typed.(ctrlruntimeclient.Object); ok {
			return obj, nil
		}
		return nil, fmt.Errorf("the kind %s is not an object", gvk)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// create creates want. When the API server finds it there, a cache behind
// or one that holds only our objects did not show it: the object is read
// through Live and handled as an existing one, so a foreign object is left
// alone.
func (t Target) create(ctx context.Context, want *unstructured.Unstructured) (Result, error) {
	err := t.Writer.Create(ctx, want.DeepCopy(), ctrlruntimeclient.FieldOwner(t.FieldManager))
	if err == nil {
		return Created, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return Unchanged, fmt.Errorf("failed to create %s %s: %w", want.GetKind(), key(want), err)
	}
	have := &unstructured.Unstructured{}
	have.SetGroupVersionKind(want.GroupVersionKind())
	if err := t.Live.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(want), have); err != nil {
		if apierrors.IsNotFound(err) {
			return Unchanged, nil
		}
		return Unchanged, fmt.Errorf("failed to read %s %s, which is in the way: %w", want.GetKind(), key(want), err)
	}
	return t.update(ctx, have, want, inTheWayVerbosity)
}

// update applies want over have when have is ours and does not hold it. The
// apply names have's uid: should have be gone from the API server, or be
// replaced by another object, it fails instead of creating or taking over
// an object; a conflict of a cache behind is no error, as the event of the
// newer object brings the next attempt.
func (t Target) update(ctx context.Context, have ctrlruntimeclient.Object, want *unstructured.Unstructured, verbosity int) (Result, error) {
	if !t.Owned(have) {
		return t.leave(ctx, want.GetKind(), have, verbosity), nil
	}
	holds, err := Holds(have, want)
	if err != nil || holds {
		return Unchanged, err
	}
	if needsMigration(have, want.Object, t.FieldManager) {
		if err := t.migrate(ctx, have, want); err != nil {
			return Unchanged, err
		}
	}
	applied := want.DeepCopy()
	applied.SetUID(have.GetUID())
	err = t.Writer.Apply(ctx, ctrlruntimeclient.ApplyConfigurationFromUnstructured(applied), ctrlruntimeclient.FieldOwner(t.FieldManager), ctrlruntimeclient.ForceOwnership)
	if apierrors.IsConflict(err) {
		log.FromContext(ctx).V(1).Info("the object changed since it was read; waiting for its event", "kind", want.GetKind(), "name", want.GetName())
		return Unchanged, nil
	}
	if err != nil {
		return Unchanged, fmt.Errorf("failed to apply %s %s: %w", want.GetKind(), key(want), err)
	}
	return Applied, nil
}

// leave leaves have, an object of kind that Owned rejects, alone: it is
// logged at verbosity and told to InTheWay.
func (t Target) leave(ctx context.Context, kind string, have ctrlruntimeclient.Object, verbosity int) Result {
	log.FromContext(ctx).V(verbosity).Info("leaving an object we did not create alone", "kind", kind, "namespace", have.GetNamespace(), "name", have.GetName())
	if t.InTheWay != nil {
		t.InTheWay(ctx, kind, have)
	}
	return Foreign
}

// migrate merges the fields our Update entry of have owns into our Apply
// entry, so the apply that follows removes the ones we no longer set. The
// patch is guarded by have's resourceVersion: a cache behind fails it, and
// the newer object's event brings the next attempt.
func (t Target) migrate(ctx context.Context, have ctrlruntimeclient.Object, want *unstructured.Unstructured) error {
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(have, sets.New(t.FieldManager), t.FieldManager)
	if err != nil {
		return fmt.Errorf("failed to compute the field ownership patch of %s %s: %w", want.GetKind(), key(want), err)
	}
	if patch == nil {
		return nil
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(want.GroupVersionKind())
	obj.SetNamespace(want.GetNamespace())
	obj.SetName(want.GetName())
	if err := t.Writer.Patch(ctx, obj, ctrlruntimeclient.RawPatch(types.JSONPatchType, patch), ctrlruntimeclient.FieldOwner(t.FieldManager)); err != nil {
		return fmt.Errorf("failed to hand the fields of %s %s to server-side apply: %w", want.GetKind(), key(want), err)
	}
	return nil
}

// key names an object in errors.
func key(obj ctrlruntimeclient.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}
