package infracontroller_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/flavors"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

const wait = 20 * time.Second

// builtins are the objects every tenant namespace gets with the default
// options.
var builtins = []struct {
	gvk  schema.GroupVersionKind
	name string
	spec map[string]any
}{
	{flavors.PresetGVK, "kubermatic-standard", map[string]any{
		"selector": map[string]any{"matchLabels": map[string]any{"kubevirt.io/flavor": "kubermatic-standard"}},
		"domain": map[string]any{"devices": map[string]any{}, "resources": map[string]any{
			"requests": map[string]any{"cpu": "2", "memory": "8Gi"},
			"limits":   map[string]any{"cpu": "2", "memory": "8Gi"},
		}},
	}},
	{flavors.InstancetypeGVK, "standard-2", map[string]any{"cpu": map[string]any{"guest": int64(2)}, "memory": map[string]any{"guest": "8Gi"}}},
	{flavors.InstancetypeGVK, "standard-4", map[string]any{"cpu": map[string]any{"guest": int64(4)}, "memory": map[string]any{"guest": "16Gi"}}},
	{flavors.InstancetypeGVK, "standard-8", map[string]any{"cpu": map[string]any{"guest": int64(8)}, "memory": map[string]any{"guest": "32Gi"}}},
	{flavors.PreferenceGVK, "sockets-advantage", map[string]any{"cpu": map[string]any{"preferredCPUTopology": "preferSockets"}}},
}

// hasCopy checks that namespace holds our copy of the object with labels
// and spec.
func hasCopy(ctx context.Context, c ctrlruntimeclient.Client, gvk schema.GroupVersionKind, namespace, name string, labels map[string]string, spec any) error {
	got, err := get(ctx, c, gvk, namespace, name)
	if err != nil {
		return err
	}
	if diff := cmp.Diff(withManaged(labels), got.GetLabels()); diff != "" {
		return fmt.Errorf("%s %s/%s labels (-want +got):\n%s", gvk.Kind, namespace, name, diff)
	}
	if diff := cmp.Diff(spec, got.Object["spec"]); diff != "" {
		return fmt.Errorf("%s %s/%s spec (-want +got):\n%s", gvk.Kind, namespace, name, diff)
	}
	return nil
}

func isGone(ctx context.Context, c ctrlruntimeclient.Client, gvk schema.GroupVersionKind, namespace, name string) error {
	_, err := get(ctx, c, gvk, namespace, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("%s %s/%s still exists", gvk.Kind, namespace, name)
}

func presetSpec(cpu string) map[string]any {
	return map[string]any{
		"selector": map[string]any{"matchLabels": map[string]any{"kubevirt.io/flavor": "custom"}},
		"domain": map[string]any{"devices": map[string]any{},
			"resources": map[string]any{"requests": map[string]any{"cpu": cpu, "memory": "4Gi"}}},
	}
}

func TestFlavors(t *testing.T) {
	infra := kubeVirtPlane.Env(t)
	ctx, c := t.Context(), infra.Client
	s := newSpace(t, infra)
	o := s.options(infracontroller.DefaultOptions())
	o.EnableStorageClasses = false
	ctrl := startController(t, infra.Config, o, nil, -1)
	nsA, nsB, other := s.tenant("a"), s.tenant("b"), s.other("other")
	createTenant(t, c, nsA, nil)
	createTenant(t, c, other, nil)

	t.Run("every built-in reaches a tenant namespace", func(t *testing.T) {
		for _, b := range builtins {
			poll.Until(t, wait, func() error { return hasCopy(ctx, c, b.gvk, nsA, b.name, nil, b.spec) })
		}
	})
	custom := object(flavors.PresetGVK, s.source, "custom", map[string]string{"team": "a"}, presetSpec("1"))
	t.Run("a source preset is copied into tenant namespaces only, existing and new", func(t *testing.T) {
		if err := c.Create(ctx, custom); err != nil {
			t.Fatal(err)
		}
		createTenant(t, c, nsB, nil)
		for _, ns := range []string{nsA, nsB} {
			poll.Until(t, wait, func() error {
				return hasCopy(ctx, c, flavors.PresetGVK, ns, "custom", map[string]string{"team": "a"}, presetSpec("1"))
			})
		}
		poll.Holds(t, time.Second, func() error { return isGone(ctx, c, flavors.PresetGVK, other, "custom") })
	})
	t.Run("a change in the source namespace reaches every copy", func(t *testing.T) {
		changeSource(t, c, s.source, "custom", map[string]string{"team": "b"}, presetSpec("3"))
		for _, ns := range []string{nsA, nsB} {
			poll.Until(t, wait, func() error {
				return hasCopy(ctx, c, flavors.PresetGVK, ns, "custom", map[string]string{"team": "b"}, presetSpec("3"))
			})
		}
	})
	t.Run("hand edits and deletions of our objects are undone", func(t *testing.T) {
		checkHandEditsUndone(t, c, nsA, nsB)
	})
	t.Run("objects we did not create are never touched", func(t *testing.T) {
		checkForeignUntouched(t, c, s.source, nsA, nsB)
	})
	t.Run("a preset deleted from the source namespace is deleted from the copies", func(t *testing.T) {
		if err := c.Delete(ctx, object(flavors.PresetGVK, s.source, "custom", nil, nil)); err != nil {
			t.Fatal(err)
		}
		for _, ns := range []string{nsA, nsB} {
			poll.Until(t, wait, func() error { return isGone(ctx, c, flavors.PresetGVK, ns, "custom") })
		}
		if err := hasCopy(ctx, c, flavors.PresetGVK, nsA, "kubermatic-standard", nil, builtins[0].spec); err != nil {
			t.Errorf("the built-in preset went away with the copy: %v", err)
		}
	})
	t.Run("switching a set off deletes what we created and nothing else", func(t *testing.T) {
		ctrl.stop()
		off := o
		off.Flavors.Presets, off.Flavors.Instancetypes = false, false
		startController(t, infra.Config, off, nil, -1)
		checkSwitchedOff(t, c, nsA)
	})
}

// changeSource updates labels and spec of a preset in the source namespace.
func changeSource(t *testing.T, c ctrlruntimeclient.Client, source, name string, labels map[string]string, spec map[string]any) {
	t.Helper()
	src, err := get(t.Context(), c, flavors.PresetGVK, source, name)
	if err != nil {
		t.Fatal(err)
	}
	src.SetLabels(labels)
	src.Object["spec"] = spec
	if err := c.Update(t.Context(), src); err != nil {
		t.Fatal(err)
	}
}

// checkForeignUntouched creates a foreign preset, and a foreign preset
// whose name then appears in the source namespace, and checks that neither
// changes while the source copy reaches another tenant namespace.
func checkForeignUntouched(t *testing.T, c ctrlruntimeclient.Client, source, nsA, nsB string) {
	t.Helper()
	ctx := t.Context()
	foreign := []*unstructured.Unstructured{
		object(flavors.PresetGVK, nsA, "hand-made", nil, presetSpec("5")),
		object(flavors.PresetGVK, nsA, "collide", map[string]string{"owner": "someone"}, presetSpec("6")),
	}
	for _, obj := range foreign {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Create(ctx, object(flavors.PresetGVK, source, "collide", nil, presetSpec("7"))); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, wait, func() error { return hasCopy(ctx, c, flavors.PresetGVK, nsB, "collide", nil, presetSpec("7")) })
	poll.Holds(t, 2*time.Second, func() error {
		var errs []error
		for _, want := range foreign {
			got, err := get(ctx, c, flavors.PresetGVK, nsA, want.GetName())
			if err != nil {
				return err
			}
			if got.GetResourceVersion() != want.GetResourceVersion() {
				errs = append(errs, fmt.Errorf("foreign preset %s was written: %v", want.GetName(), got.Object))
			}
		}
		return errors.Join(errs...)
	})
	// The preset in the way of the copy says so.
	poll.Until(t, wait, func() error { return checkWarning(ctx, c, foreign[1], infrav1alpha1.ReasonObjectInTheWay, nil) })
	if err := c.Delete(ctx, object(flavors.PresetGVK, source, "collide", nil, nil)); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, wait, func() error { return isGone(ctx, c, flavors.PresetGVK, nsB, "collide") })
	if _, err := get(ctx, c, flavors.PresetGVK, nsA, "collide"); err != nil {
		t.Errorf("deleting the source deleted a foreign preset of the same name: %v", err)
	}
}

// checkHandEditsUndone edits one built-in and deletes one copy by hand and
// waits for both to be restored.
func checkHandEditsUndone(t *testing.T, c ctrlruntimeclient.Client, nsA, nsB string) {
	t.Helper()
	ctx := t.Context()
	edited, err := get(ctx, c, flavors.InstancetypeGVK, nsA, "standard-4")
	if err != nil {
		t.Fatal(err)
	}
	edited.Object["spec"] = map[string]any{"cpu": map[string]any{"guest": int64(64)}, "memory": map[string]any{"guest": "1Gi"}}
	if err := c.Update(ctx, edited); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, object(flavors.PresetGVK, nsB, "custom", nil, nil)); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, wait, func() error {
		return hasCopy(ctx, c, flavors.InstancetypeGVK, nsA, "standard-4", nil, builtins[2].spec)
	})
	poll.Until(t, wait, func() error {
		return hasCopy(ctx, c, flavors.PresetGVK, nsB, "custom", map[string]string{"team": "b"}, presetSpec("3"))
	})
}

// checkSwitchedOff waits for presets and instancetypes to be gone from
// tenant namespace a and checks that the preference and foreign presets stayed.
func checkSwitchedOff(t *testing.T, c ctrlruntimeclient.Client, nsA string) {
	t.Helper()
	ctx := t.Context()
	for _, b := range builtins[:4] {
		poll.Until(t, wait, func() error { return isGone(ctx, c, b.gvk, nsA, b.name) })
	}
	if err := hasCopy(ctx, c, flavors.PreferenceGVK, nsA, "sockets-advantage", nil, builtins[4].spec); err != nil {
		t.Errorf("the preference went away with the instancetypes: %v", err)
	}
	for _, name := range []string{"hand-made", "collide"} {
		if _, err := get(ctx, c, flavors.PresetGVK, nsA, name); err != nil {
			t.Errorf("a foreign preset went away with ours: %v", err)
		}
	}
}

// TestInstancetypeSeries: the performance and density series reach tenant
// namespaces when switched on, as KubeVirt's API server stores them, and
// go when switched off, leaving the standard series.
func TestInstancetypeSeries(t *testing.T) {
	infra := kubeVirtPlane.Env(t)
	ctx, c := t.Context(), infra.Client
	s := newSpace(t, infra)
	o := s.options(infracontroller.DefaultOptions())
	o.EnableStorageClasses = false
	o.Flavors.PerformanceInstancetypes, o.Flavors.DensityInstancetypes = true, true
	ctrl := startController(t, infra.Config, o, nil, -1)
	nsA := s.tenant("a")
	createTenant(t, c, nsA, nil)
	series := append(flavors.PerformanceInstancetypes(), flavors.DensityInstancetypes()...)
	for _, it := range series {
		poll.Until(t, wait, func() error {
			return hasCopy(ctx, c, flavors.InstancetypeGVK, nsA, it.GetName(), nil, it.Object["spec"])
		})
	}
	ctrl.stop()
	o.Flavors.PerformanceInstancetypes, o.Flavors.DensityInstancetypes = false, false
	startController(t, infra.Config, o, nil, -1)
	for _, it := range series {
		poll.Until(t, wait, func() error { return isGone(ctx, c, flavors.InstancetypeGVK, nsA, it.GetName()) })
	}
	if err := hasCopy(ctx, c, flavors.InstancetypeGVK, nsA, "standard-2", nil, flavors.StandardInstancetypes()[0].Object["spec"]); err != nil {
		t.Errorf("the standard series went with the others: %v", err)
	}
}
