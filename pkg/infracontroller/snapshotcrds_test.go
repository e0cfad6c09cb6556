package infracontroller_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/storageclass"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// snapshotCRDNames are the CRDs the controller installs.
var snapshotCRDNames = []string{
	"volumesnapshotclasses.snapshot.storage.k8s.io",
	"volumesnapshotcontents.snapshot.storage.k8s.io",
	"volumesnapshots.snapshot.storage.k8s.io",
}

// markerAnnotation marks the tenant admin's own VolumeSnapshotClass CRD.
const markerAnnotation = "example.com/installed-by-tenant-admin"

// TestSnapshotCRDs runs the infra-controller with snapshots and
// TenantClusters on against two tenant clusters: "bare" has no snapshot
// CRDs and is owned by TenantCluster snap, "own" has a VolumeSnapshotClass
// CRD of the tenant admin's. Bare gets the three CRDs, an event on snap and
// then its VolumeSnapshotClass; own keeps its CRD as it was and gets the
// two missing ones. Deleting snap deletes our VolumeSnapshotClass in bare,
// not the tenant's own one, and leaves the CRDs.
func TestSnapshotCRDs(t *testing.T) {
	infra, ic, s := tenantClusterEnv(t)
	bare := envtest.Start(t, envtest.WithCRDFiles())
	own := envtest.Start(t, envtest.WithCRDFiles())
	ctx := t.Context()
	createSnapshotClassCRD(t, own.Client)
	ownCRD := markCRD(t, own.Client, snapshotCRDNames[0])

	o := s.options(infracontroller.DefaultOptions())
	o.Flavors = flavorsOff()
	o.EnableTenantClusters, o.StorageClasses.Snapshots = true, true
	o.EnableCSIAccess, o.EnableNetworkPolicies = false, false
	startController(t, infra.Config, o, nil, -1)
	createInfraClasses(t, ic, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast", Annotations: map[string]string{
		storageclass.InitializeAnnotation: "true", storageclass.SnapshotClassAnnotation: "fast-snap"}}, Provisioner: "example.com/fast"})
	if err := ic.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "snap-kubeconfig"},
		Data:       map[string][]byte{"kubeconfig": bare.KubeconfigBytes},
	}); err != nil {
		t.Fatal(err)
	}
	createTenantCluster(t, ic, "snap", &infrav1alpha1.SecretKeyReference{Namespace: "default", Name: "snap-kubeconfig"})
	createTenant(t, ic, s.tenant("own"), own.KubeconfigBytes)

	t.Run("absent CRDs are installed, then the VolumeSnapshotClasses follow", func(t *testing.T) {
		poll.Until(t, wait, expectSnapshotClasses(ctx, bare.Client, map[string]string{"kubevirt-fast": "fast-snap"}))
		for _, name := range snapshotCRDNames {
			crd := getCRD(t, bare.Client, name)
			if got := crd.GetAnnotations()[storageclass.InstalledByAnnotation]; got != storageclass.InstalledByValue {
				t.Errorf("CRD %s: annotation %s = %q, want %q", name, storageclass.InstalledByAnnotation, got, storageclass.InstalledByValue)
			}
		}
		poll.Until(t, wait, func() error {
			return wantEvent(ctx, ic, "snap", corev1.EventTypeNormal, storageclass.ReasonSnapshotCRDsInstalled)
		})
	})
	t.Run("an existing CRD is left unchanged", func(t *testing.T) {
		poll.Until(t, wait, expectSnapshotClasses(ctx, own.Client, map[string]string{"kubevirt-fast": "fast-snap"}))
		got := getCRD(t, own.Client, snapshotCRDNames[0])
		if got.GetResourceVersion() != ownCRD.GetResourceVersion() || got.GetAnnotations()[markerAnnotation] != "yes" {
			t.Errorf("the tenant's CRD changed: resourceVersion %s -> %s, annotations %v", ownCRD.GetResourceVersion(), got.GetResourceVersion(), got.GetAnnotations())
		}
		if _, ok := got.GetAnnotations()[storageclass.InstalledByAnnotation]; ok {
			t.Errorf("the tenant's CRD was taken over: annotations %v", got.GetAnnotations())
		}
		for _, name := range snapshotCRDNames[1:] {
			getCRD(t, own.Client, name)
		}
	})
	t.Run("deleting the TenantCluster deletes our VolumeSnapshotClasses only", func(t *testing.T) {
		foreign := &unstructured.Unstructured{Object: map[string]any{"driver": "example.com/other", "deletionPolicy": "Delete"}}
		foreign.SetGroupVersionKind(storageclass.SnapshotClassGVK)
		foreign.SetName("kubevirt-own")
		if err := bare.Client.Create(ctx, foreign); err != nil {
			t.Fatal(err)
		}
		if err := ic.Delete(ctx, &infrav1alpha1.TenantCluster{ObjectMeta: metav1.ObjectMeta{Name: "snap"}}); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, time.Minute, func() error {
			if err := ic.Get(ctx, types.NamespacedName{Name: "snap"}, &infrav1alpha1.TenantCluster{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("TenantCluster snap: got %w, want not found", err)
			}
			return nil
		})
		if err := expectSnapshotClasses(ctx, bare.Client, map[string]string{})(); err != nil {
			t.Error(err)
		}
		if err := bare.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(foreign), foreign); err != nil {
			t.Errorf("the tenant's own VolumeSnapshotClass: %v", err)
		}
		for _, name := range snapshotCRDNames {
			getCRD(t, bare.Client, name)
		}
	})
}

// TestSnapshotCRDsOff runs the storage-class controller without snapshots:
// the tenant cluster gets its StorageClass and no snapshot CRD.
func TestSnapshotCRDsOff(t *testing.T) {
	infra := infraPlane.Env(t)
	tenantEnv := envtest.Start(t, envtest.WithCRDFiles())
	ctx := t.Context()
	s := newSpace(t, infra)
	o := s.options(infracontroller.DefaultOptions())
	o.Flavors = flavorsOff()
	startController(t, infra.Config, o, nil, -1)
	createInfraClasses(t, infra.Client, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast", Annotations: map[string]string{
		storageclass.InitializeAnnotation: "true", storageclass.SnapshotClassAnnotation: "fast-snap"}}, Provisioner: "example.com/fast"})
	createTenant(t, infra.Client, s.tenant("a"), tenantEnv.KubeconfigBytes)
	poll.Until(t, wait, func() error {
		return tenantEnv.Client.Get(ctx, types.NamespacedName{Name: "kubevirt-fast"}, &storagev1.StorageClass{})
	})
	poll.Holds(t, 2*time.Second, func() error {
		for _, name := range snapshotCRDNames {
			crd := &unstructured.Unstructured{}
			crd.SetGroupVersionKind(storageclass.CRDGVK)
			if err := tenantEnv.Client.Get(ctx, types.NamespacedName{Name: name}, crd); !apierrors.IsNotFound(err) {
				return fmt.Errorf("CRD %s: got %w, want not found", name, err)
			}
		}
		return nil
	})
}

// markCRD adds markerAnnotation to CRD name and returns it as updated.
func markCRD(t *testing.T, c ctrlruntimeclient.Client, name string) *unstructured.Unstructured {
	t.Helper()
	crd := getCRD(t, c, name)
	annotations := crd.GetAnnotations()
	annotations[markerAnnotation] = "yes"
	crd.SetAnnotations(annotations)
	if err := c.Update(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

// getCRD returns CRD name, failing the test when it is missing.
func getCRD(t *testing.T, c ctrlruntimeclient.Client, name string) *unstructured.Unstructured {
	t.Helper()
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(storageclass.CRDGVK)
	if err := c.Get(t.Context(), types.NamespacedName{Name: name}, crd); err != nil {
		t.Fatalf("CRD %s: %v", name, err)
	}
	return crd
}

// wantEvent checks that an event of type and reason was recorded for
// TenantCluster name.
func wantEvent(ctx context.Context, c ctrlruntimeclient.Client, name, typ, reason string) error {
	var list eventsv1.EventList
	if err := c.List(ctx, &list); err != nil {
		return err
	}
	if slices.ContainsFunc(list.Items, func(e eventsv1.Event) bool {
		return e.Regarding.Kind == "TenantCluster" && e.Regarding.Name == name && e.Regarding.UID != "" && e.Type == typ && e.Reason == reason
	}) {
		return nil
	}
	return fmt.Errorf("no %s event %s for TenantCluster %s among %d events", typ, reason, name, len(list.Items))
}
