package apply_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/apply"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

const owner = "owner"

func owned(obj ctrlruntimeclient.Object) bool { return obj.GetLabels()[owner] == "test" }

// absent is a reader that holds nothing: a cache that selects only our
// objects, or one that has not caught up yet.
type absent struct{ ctrlruntimeclient.Reader }

func (absent) Get(_ context.Context, key ctrlruntimeclient.ObjectKey, _ ctrlruntimeclient.Object, _ ...ctrlruntimeclient.GetOption) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, key.Name)
}

// fixture is a control plane, an uncached admin client and a target whose
// writes are counted.
type fixture struct {
	env     *envtest.Env
	admin   ctrlruntimeclient.Client
	counter *envtest.RequestCounter
	target  apply.Target
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	env := envtest.Start(t)
	counter := envtest.NewRequestCounter()
	cfg := rest.CopyConfig(env.Config)
	cfg.WrapTransport = counter.Wrap
	writer, err := ctrlruntimeclient.New(cfg, ctrlruntimeclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Discovery once, before any counted write.
	if _, err := writer.RESTMapper().RESTMapping(schema.GroupKind{Kind: "ConfigMap"}, "v1"); err != nil {
		t.Fatal(err)
	}
	return &fixture{env: env, admin: env.Client, counter: counter, target: apply.Target{
		Reader: env.Client, Live: env.Client, Writer: writer, FieldManager: "apply-test", Owned: owned,
	}}
}

func configMap(namespace string, labels, data map[string]string) *corev1.ConfigMap {
	l := map[string]string{owner: "test"}
	for k, v := range labels {
		l[k] = v
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "cm", Labels: l}, Data: data}
}

// write runs Object and checks its result and the requests it sent.
func (f *fixture) write(t *testing.T, target apply.Target, obj ctrlruntimeclient.Object, want apply.Result, requests map[envtest.Request]int) {
	t.Helper()
	f.counter.Reset()
	got, err := target.Object(t.Context(), obj)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("result = %s, want %s", got, want)
	}
	if requests == nil {
		requests = map[envtest.Request]int{}
	}
	if diff := cmp.Diff(requests, f.counter.Counts()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func (f *fixture) get(t *testing.T, namespace string) *corev1.ConfigMap {
	t.Helper()
	var cm corev1.ConfigMap
	if err := f.admin.Get(t.Context(), ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: "cm"}, &cm); err != nil {
		t.Fatal(err)
	}
	return &cm
}

var (
	post  = envtest.Request{Verb: "POST", Resource: "v1/configmaps"}
	patch = envtest.Request{Verb: "PATCH", Resource: "v1/configmaps"}
)

func TestObject(t *testing.T) {
	f := newFixture(t)

	t.Run("created once, then nothing is sent", func(t *testing.T) {
		ns := f.env.CreateNamespace(t, "apply")
		f.write(t, f.target, configMap(ns, nil, map[string]string{"a": "1"}), apply.Created, map[envtest.Request]int{post: 1})
		f.write(t, f.target, configMap(ns, nil, map[string]string{"a": "1"}), apply.Unchanged, nil)
	})
	t.Run("a field no longer set is removed", func(t *testing.T) {
		ns := f.env.CreateNamespace(t, "apply")
		f.write(t, f.target, configMap(ns, map[string]string{"x": "y"}, map[string]string{"a": "1", "b": "2"}), apply.Created, map[envtest.Request]int{post: 1})
		// The Create left the fields to an Update entry: one patch hands
		// them to server-side apply, one applies.
		f.write(t, f.target, configMap(ns, nil, map[string]string{"a": "1"}), apply.Applied, map[envtest.Request]int{patch: 2})
		cm := f.get(t, ns)
		if diff := cmp.Diff(map[string]string{"a": "1"}, cm.Data); diff != "" {
			t.Errorf("data (-want +got):\n%s", diff)
		}
		if _, ok := cm.Labels["x"]; ok {
			t.Errorf("the label no longer set is still there: %v", cm.Labels)
		}
		// Once the apply owns the fields, a removal is one apply.
		f.write(t, f.target, configMap(ns, nil, nil), apply.Applied, map[envtest.Request]int{patch: 1})
		if cm := f.get(t, ns); len(cm.Data) != 0 {
			t.Errorf("data = %v, want none", cm.Data)
		}
		f.write(t, f.target, configMap(ns, nil, nil), apply.Unchanged, nil)
	})
	t.Run("drift by another writer is repaired", func(t *testing.T) {
		ns := f.env.CreateNamespace(t, "apply")
		f.write(t, f.target, configMap(ns, nil, map[string]string{"a": "1"}), apply.Created, map[envtest.Request]int{post: 1})
		cm := f.get(t, ns)
		cm.Data["a"], cm.Data["theirs"] = "hand", "kept"
		if err := f.admin.Update(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
		f.write(t, f.target, configMap(ns, nil, map[string]string{"a": "1"}), apply.Applied, map[envtest.Request]int{patch: 1})
		if diff := cmp.Diff(map[string]string{"a": "1", "theirs": "kept"}, f.get(t, ns).Data); diff != "" {
			t.Errorf("data (-want +got):\n%s", diff)
		}
		f.write(t, f.target, configMap(ns, nil, map[string]string{"a": "1"}), apply.Unchanged, nil)
	})
	t.Run("a foreign object is left alone", func(t *testing.T) {
		ns := f.env.CreateNamespace(t, "apply")
		foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}, Data: map[string]string{"a": "theirs"}}
		if err := f.admin.Create(t.Context(), foreign); err != nil {
			t.Fatal(err)
		}
		var told []string
		inTheWay := f.target
		inTheWay.InTheWay = func(_ context.Context, kind string, obj ctrlruntimeclient.Object) {
			told = append(told, kind+" "+string(obj.GetUID()))
		}
		f.write(t, inTheWay, configMap(ns, nil, map[string]string{"a": "1"}), apply.Foreign, nil)
		// A cache that holds only our objects does not show it: the
		// Create finds it, and it is still left alone.
		stale := inTheWay
		stale.Reader = absent{}
		f.write(t, stale, configMap(ns, nil, map[string]string{"a": "1"}), apply.Foreign, map[envtest.Request]int{post: 1})
		if got := f.get(t, ns); got.ResourceVersion != foreign.ResourceVersion {
			t.Errorf("the foreign object was written: %v", got)
		}
		if want := []string{"ConfigMap " + string(foreign.UID), "ConfigMap " + string(foreign.UID)}; !slices.Equal(told, want) {
			t.Errorf("InTheWay was told of %q, want the foreign object's uid twice, %q", told, want)
		}
	})
	t.Run("a cache behind our own create", func(t *testing.T) {
		ns := f.env.CreateNamespace(t, "apply")
		f.write(t, f.target, configMap(ns, nil, map[string]string{"a": "1"}), apply.Created, map[envtest.Request]int{post: 1})
		stale := f.target
		stale.Reader = absent{}
		f.write(t, stale, configMap(ns, nil, map[string]string{"a": "1"}), apply.Unchanged, map[envtest.Request]int{post: 1})
		f.write(t, stale, configMap(ns, nil, map[string]string{"a": "2"}), apply.Applied, map[envtest.Request]int{post: 1, patch: 1})
		if got := f.get(t, ns).Data["a"]; got != "2" {
			t.Errorf("data a = %q, want 2", got)
		}
	})
}
