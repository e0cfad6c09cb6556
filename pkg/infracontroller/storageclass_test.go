package infracontroller_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/apply"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/storageclass"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

func zoneTerm(key string, values ...string) corev1.TopologySelectorTerm {
	return corev1.TopologySelectorTerm{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: key, Values: values}}}
}

// tenantClass is the tenant StorageClass expected for an infra class.
func tenantClass(infraName, bus string, isDefault bool, binding storagev1.VolumeBindingMode, topologies ...corev1.TopologySelectorTerm) storagev1.StorageClass {
	sc := storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:   "kubevirt-" + infraName,
			Labels: map[string]string{tenant.ManagedByLabel: tenant.ManagedByValue, storageclass.InfraClassLabel: infraName},
		},
		Provisioner:       "csi.kubevirt.io",
		Parameters:        map[string]string{"infraStorageClassName": infraName, "bus": bus},
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(binding),
		AllowedTopologies: topologies,
	}
	if isDefault {
		sc.Annotations = map[string]string{storageclass.DefaultClassAnnotation: "true"}
	}
	return sc
}

// managedClasses returns the tenant classes carrying our label.
func managedClasses(ctx context.Context, c ctrlruntimeclient.Client) ([]storagev1.StorageClass, error) {
	var list storagev1.StorageClassList
	if err := c.List(ctx, &list, ctrlruntimeclient.MatchingLabels{tenant.ManagedByLabel: tenant.ManagedByValue}); err != nil {
		return nil, err
	}
	for i := range list.Items {
		sc := &list.Items[i]
		// What the writes leave besides the class: the hash of package
		// apply and an explicit "no expansion".
		delete(sc.Annotations, apply.HashAnnotation)
		if !ptr.Deref(sc.AllowVolumeExpansion, false) {
			sc.AllowVolumeExpansion = nil
		}
	}
	return list.Items, nil
}

func expectClasses(ctx context.Context, c ctrlruntimeclient.Client, want ...storagev1.StorageClass) func() error {
	return func() error {
		got, err := managedClasses(ctx, c)
		if err != nil {
			return err
		}
		opts := cmp.Options{
			cmpopts.IgnoreFields(metav1.ObjectMeta{}, "UID", "ResourceVersion", "Generation", "CreationTimestamp", "ManagedFields"),
			cmpopts.SortSlices(func(a, b storagev1.StorageClass) bool { return a.Name < b.Name }),
			cmpopts.EquateEmpty(),
		}
		if diff := cmp.Diff(want, got, opts); diff != "" {
			return fmt.Errorf("tenant storage classes (-want +got):\n%s", diff)
		}
		return nil
	}
}

func TestStorageClasses(t *testing.T) {
	infra := infraPlane.Env(t)
	tenantEnv := envtest.Start(t, envtest.WithCRDFiles())
	ctx, ic, tc := t.Context(), infra.Client, tenantEnv.Client
	s := newSpace(t, infra)
	o := s.options(infracontroller.DefaultOptions())
	o.Flavors = flavorsOff()
	// No resync: hand edits in the tenant cluster are undone because the
	// managed classes there are watched.
	o.StorageClasses.ResyncInterval = 0
	startController(t, infra.Config, o, nil, -1)

	foreign := createClasses(t, ic, tc)
	createTenant(t, ic, s.tenant("a"), tenantEnv.KubeconfigBytes)

	fast := tenantClass("fast", "scsi", true, storagev1.VolumeBindingWaitForFirstConsumer, zoneTerm(corev1.LabelTopologyZone, "z1", "z2"))
	zoned := tenantClass("zoned", "virtio", false, storagev1.VolumeBindingImmediate, zoneTerm(corev1.LabelTopologyZone, "z3", "z4"))
	t.Run("annotated infra classes appear in the tenant cluster, the default stays default", func(t *testing.T) {
		poll.Until(t, wait, expectClasses(ctx, tc, fast, zoned))
	})
	t.Run("a tenant class we did not create is never touched", func(t *testing.T) {
		var got storagev1.StorageClass
		if err := tc.Get(ctx, ctrlruntimeclient.ObjectKey{Name: foreign.Name}, &got); err != nil {
			t.Fatal(err)
		}
		if got.ResourceVersion != foreign.ResourceVersion {
			t.Errorf("foreign class was written: %+v", got)
		}
	})
	t.Run("hand edits and deletions in the tenant cluster are undone", func(t *testing.T) {
		var edited storagev1.StorageClass
		if err := tc.Get(ctx, ctrlruntimeclient.ObjectKey{Name: "kubevirt-fast"}, &edited); err != nil {
			t.Fatal(err)
		}
		edited.Annotations[storageclass.DefaultClassAnnotation] = "false"
		if err := tc.Update(ctx, &edited); err != nil {
			t.Fatal(err)
		}
		if err := tc.Delete(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "kubevirt-zoned"}}); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, expectClasses(ctx, tc, fast, zoned))
	})
	t.Run("a changed parameter recreates the tenant class", func(t *testing.T) {
		annotate(t, ic, "zoned", storageclass.BusAnnotation, "sata")
		poll.Until(t, wait, expectClasses(ctx, tc, fast, tenantClass("zoned", "sata", false, storagev1.VolumeBindingImmediate, zoneTerm(corev1.LabelTopologyZone, "z3", "z4"))))
	})
	t.Run("an infra class that allows expansion makes its tenant class expandable in place", func(t *testing.T) {
		var before storagev1.StorageClass
		if err := tc.Get(ctx, ctrlruntimeclient.ObjectKey{Name: "kubevirt-fast"}, &before); err != nil {
			t.Fatal(err)
		}
		var sc storagev1.StorageClass
		if err := ic.Get(ctx, ctrlruntimeclient.ObjectKey{Name: "fast"}, &sc); err != nil {
			t.Fatal(err)
		}
		sc.AllowVolumeExpansion = ptr.To(true)
		if err := ic.Update(ctx, &sc); err != nil {
			t.Fatal(err)
		}
		expandable := fast.DeepCopy()
		expandable.AllowVolumeExpansion = ptr.To(true)
		zoned := tenantClass("zoned", "sata", false, storagev1.VolumeBindingImmediate, zoneTerm(corev1.LabelTopologyZone, "z3", "z4"))
		poll.Until(t, wait, expectClasses(ctx, tc, *expandable, zoned))
		var after storagev1.StorageClass
		if err := tc.Get(ctx, ctrlruntimeclient.ObjectKey{Name: "kubevirt-fast"}, &after); err != nil {
			t.Fatal(err)
		}
		if after.UID != before.UID {
			t.Error("the tenant class was recreated, want an update")
		}
	})
	t.Run("removing the annotation removes the tenant class", func(t *testing.T) {
		annotate(t, ic, "fast", storageclass.InitializeAnnotation, "")
		annotate(t, ic, "zoned", storageclass.InitializeAnnotation, "")
		poll.Until(t, wait, expectClasses(ctx, tc))
		var got storagev1.StorageClass
		if err := tc.Get(ctx, ctrlruntimeclient.ObjectKey{Name: foreign.Name}, &got); err != nil {
			t.Errorf("the foreign class went away: %v", err)
		}
	})
}

// annotate sets (or, for "", removes) an annotation of an infra class.
func annotate(t *testing.T, c ctrlruntimeclient.Client, name, key, value string) {
	t.Helper()
	var sc storagev1.StorageClass
	if err := c.Get(t.Context(), ctrlruntimeclient.ObjectKey{Name: name}, &sc); err != nil {
		t.Fatal(err)
	}
	if value == "" {
		delete(sc.Annotations, key)
	} else {
		sc.Annotations[key] = value
	}
	if err := c.Update(t.Context(), &sc); err != nil {
		t.Fatal(err)
	}
}

// createClasses creates the infra classes of TestStorageClasses and a
// foreign class in the tenant cluster, which it returns.
func createClasses(t *testing.T, ic, tc ctrlruntimeclient.Client) *storagev1.StorageClass {
	t.Helper()
	ctx := t.Context()
	foreign := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "kubevirt-legacy"}, Provisioner: "example.com/other"}
	createInfraClasses(t, ic,
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast", Annotations: map[string]string{
			storageclass.InitializeAnnotation: "true", storageclass.DefaultClassAnnotation: "true"}},
			Provisioner:       "example.com/fast",
			VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
			AllowedTopologies: []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
				{Key: corev1.LabelTopologyZone, Values: []string{"z1", "z2"}},
				{Key: corev1.LabelHostname, Values: []string{"infra-node-1"}},
			}}}},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "zoned", Annotations: map[string]string{
			storageclass.InitializeAnnotation: "true", storageclass.BusAnnotation: "virtio", storageclass.ZonesAnnotation: "z3, z4"}},
			Provisioner: "example.com/zoned"},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "slow"}, Provisioner: "example.com/slow"},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "legacy", Annotations: map[string]string{storageclass.InitializeAnnotation: "true"}},
			Provisioner: "example.com/legacy"},
	)
	if err := tc.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	return foreign
}

// TestStorageClassSnapshots runs the storage-class controller with
// snapshots on against a tenant cluster serving VolumeSnapshotClasses: it
// gets one per class whose infra class names an infra VolumeSnapshotClass,
// kept in line with the annotation. TestSnapshotCRDs covers tenant clusters
// without the snapshot CRDs.
func TestStorageClassSnapshots(t *testing.T) {
	infra := infraPlane.Env(t)
	withCRD := envtest.Start(t)
	ctx, ic := t.Context(), infra.Client
	s := newSpace(t, infra)
	createSnapshotClassCRD(t, withCRD.Client)
	o := s.options(infracontroller.DefaultOptions())
	o.Flavors = flavorsOff()
	o.StorageClasses.Snapshots = true
	startController(t, infra.Config, o, nil, -1)
	createInfraClasses(t, ic,
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast", Annotations: map[string]string{
			storageclass.InitializeAnnotation: "true", storageclass.SnapshotClassAnnotation: "fast-snap"}}, Provisioner: "example.com/fast"},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "plain", Annotations: map[string]string{storageclass.InitializeAnnotation: "true"}}, Provisioner: "example.com/plain"},
	)
	createTenant(t, ic, s.tenant("a"), withCRD.KubeconfigBytes)
	fast := tenantClass("fast", "scsi", false, storagev1.VolumeBindingImmediate)
	plain := tenantClass("plain", "scsi", false, storagev1.VolumeBindingImmediate)

	t.Run("a VolumeSnapshotClass per class that names an infra one", func(t *testing.T) {
		poll.Until(t, wait, expectSnapshotClasses(ctx, withCRD.Client, map[string]string{"kubevirt-fast": "fast-snap"}))
		poll.Until(t, wait, expectClasses(ctx, withCRD.Client, fast, plain))
	})
	t.Run("the annotation's changes follow", func(t *testing.T) {
		annotate(t, ic, "fast", storageclass.SnapshotClassAnnotation, "fast-snap-2")
		annotate(t, ic, "plain", storageclass.SnapshotClassAnnotation, "plain-snap")
		poll.Until(t, wait, expectSnapshotClasses(ctx, withCRD.Client, map[string]string{"kubevirt-fast": "fast-snap-2", "kubevirt-plain": "plain-snap"}))
		annotate(t, ic, "fast", storageclass.SnapshotClassAnnotation, "")
		poll.Until(t, wait, expectSnapshotClasses(ctx, withCRD.Client, map[string]string{"kubevirt-plain": "plain-snap"}))
	})
}

// expectSnapshotClasses checks the VolumeSnapshotClasses carrying our label:
// name to parameter infraSnapshotClassName, driver csi.kubevirt.io.
func expectSnapshotClasses(ctx context.Context, c ctrlruntimeclient.Client, want map[string]string) func() error {
	return func() error {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(storageclass.SnapshotClassGVK.GroupVersion().WithKind("VolumeSnapshotClassList"))
		if err := c.List(ctx, list, ctrlruntimeclient.MatchingLabels{tenant.ManagedByLabel: tenant.ManagedByValue}); err != nil {
			return err
		}
		got := map[string]string{}
		for _, u := range list.Items {
			if driver, _, _ := unstructured.NestedString(u.Object, "driver"); driver != storageclass.Provisioner {
				return fmt.Errorf("%s: driver %q", u.GetName(), driver)
			}
			got[u.GetName()], _, _ = unstructured.NestedString(u.Object, "parameters", "infraSnapshotClassName")
		}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("snapshot classes (-want +got):\n%s", diff)
		}
		return nil
	}
}

// createSnapshotClassCRD installs a VolumeSnapshotClass CRD with an open
// schema, standing for one the tenant admin installed, and waits until it
// is served.
func createSnapshotClassCRD(t *testing.T, c ctrlruntimeclient.Client) {
	t.Helper()
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata": map[string]any{
			"name": "volumesnapshotclasses.snapshot.storage.k8s.io",
			// Required for the protected group snapshot.storage.k8s.io.
			"annotations": map[string]any{"api-approved.kubernetes.io": "https://github.com/kubernetes-csi/external-snapshotter/pull/814"},
		},
		"spec": map[string]any{
			"group": "snapshot.storage.k8s.io",
			"scope": "Cluster",
			"names": map[string]any{"kind": "VolumeSnapshotClass", "listKind": "VolumeSnapshotClassList", "plural": "volumesnapshotclasses", "singular": "volumesnapshotclass"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}}
	if err := c.Create(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, wait, func() error {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(storageclass.SnapshotClassGVK.GroupVersion().WithKind("VolumeSnapshotClassList"))
		return c.List(t.Context(), list)
	})
}
