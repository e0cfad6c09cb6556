package apply_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/apply"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

var del = envtest.Request{Verb: "DELETE", Resource: "v1/configmaps"}

// create runs Create and checks its result and the requests it sent.
func (f *fixture) create(t *testing.T, target apply.Target, obj ctrlruntimeclient.Object, want apply.Result, requests map[envtest.Request]int) {
	t.Helper()
	f.counter.Reset()
	got, err := target.Create(t.Context(), obj)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("result = %s, want %s", got, want)
	}
	if diff := cmp.Diff(requests, f.counter.Counts()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestCreate(t *testing.T) {
	f := newFixture(t)
	t.Run("created as given", func(t *testing.T) {
		ns := f.env.CreateNamespace(t, "create")
		f.create(t, f.target, configMap(ns, nil, map[string]string{"a": "1"}), apply.Created, map[envtest.Request]int{post: 1})
		if diff := cmp.Diff(map[string]string{"a": "1"}, f.get(t, ns).Data); diff != "" {
			t.Errorf("data (-want +got):\n%s", diff)
		}
	})
	t.Run("ours already there is no error and is not changed", func(t *testing.T) {
		ns := f.env.CreateNamespace(t, "create")
		f.create(t, f.target, configMap(ns, nil, map[string]string{"a": "1"}), apply.Created, map[envtest.Request]int{post: 1})
		f.create(t, f.target, configMap(ns, nil, map[string]string{"a": "2"}), apply.Unchanged, map[envtest.Request]int{post: 1})
		if got := f.get(t, ns).Data["a"]; got != "1" {
			t.Errorf("a = %q, want the first create's 1", got)
		}
	})
	t.Run("a foreign object is left alone and told", func(t *testing.T) {
		ns := f.env.CreateNamespace(t, "create")
		foreign := configMap(ns, nil, map[string]string{"theirs": "x"})
		delete(foreign.Labels, owner)
		if err := f.admin.Create(t.Context(), foreign); err != nil {
			t.Fatal(err)
		}
		var told []string
		target := f.target
		target.InTheWay = func(_ context.Context, kind string, obj ctrlruntimeclient.Object) {
			told = append(told, kind+" "+obj.GetName()+" "+string(obj.GetUID()))
		}
		f.create(t, target, configMap(ns, nil, map[string]string{"a": "1"}), apply.Foreign, map[envtest.Request]int{post: 1})
		if diff := cmp.Diff([]string{"ConfigMap cm " + string(foreign.UID)}, told); diff != "" {
			t.Errorf("InTheWay calls (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]string{"theirs": "x"}, f.get(t, ns).Data); diff != "" {
			t.Errorf("the foreign object changed (-want +got):\n%s", diff)
		}
	})
}

func TestDelete(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	gone := func(t *testing.T, ns string) bool {
		t.Helper()
		err := f.admin.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: ns, Name: "cm"}, &corev1.ConfigMap{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return apierrors.IsNotFound(err)
	}
	t.Run("ours is deleted once", func(t *testing.T) {
		ns := f.env.CreateNamespace(t, "delete")
		if err := f.admin.Create(ctx, configMap(ns, nil, nil)); err != nil {
			t.Fatal(err)
		}
		f.counter.Reset()
		if err := f.target.GetAndDelete(ctx, ctrlruntimeclient.ObjectKey{Namespace: ns, Name: "cm"}, &corev1.ConfigMap{}, "a test object"); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[envtest.Request]int{del: 1}, f.counter.Counts()); diff != "" {
			t.Errorf("requests (-want +got):\n%s", diff)
		}
		if !gone(t, ns) {
			t.Error("ours is still there")
		}
		if err := f.target.GetAndDelete(ctx, ctrlruntimeclient.ObjectKey{Namespace: ns, Name: "cm"}, &corev1.ConfigMap{}, "a test object"); err != nil {
			t.Errorf("an absent object: %v", err)
		}
	})
	t.Run("a foreign object is kept", func(t *testing.T) {
		ns := f.env.CreateNamespace(t, "delete")
		foreign := configMap(ns, nil, nil)
		delete(foreign.Labels, owner)
		if err := f.admin.Create(ctx, foreign); err != nil {
			t.Fatal(err)
		}
		f.counter.Reset()
		if err := f.target.Delete(ctx, foreign, "a test object"); err != nil {
			t.Fatal(err)
		}
		if len(f.counter.Counts()) != 0 || gone(t, ns) {
			t.Errorf("a foreign object was deleted (requests %v)", f.counter.Counts())
		}
	})
	t.Run("an object re-created under the same name is kept", func(t *testing.T) {
		ns := f.env.CreateNamespace(t, "delete")
		old := configMap(ns, nil, nil)
		if err := f.admin.Create(ctx, old); err != nil {
			t.Fatal(err)
		}
		if err := f.admin.Delete(ctx, old.DeepCopy()); err != nil {
			t.Fatal(err)
		}
		if err := f.admin.Create(ctx, configMap(ns, nil, nil)); err != nil {
			t.Fatal(err)
		}
		if err := f.target.Delete(ctx, old, "a test object"); err != nil {
			t.Errorf("deleting a replaced object: %v, want no error", err)
		}
		if gone(t, ns) {
			t.Error("the re-created object was deleted")
		}
	})
}
