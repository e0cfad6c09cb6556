package infracontroller_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/networks"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/networks/vlan"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantcluster"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// vlanTenants is how many TenantClusters TestTenantVLANs creates at once;
// the range has exactly as many ids.
const vlanTenants = 8

// vlanOptions runs the TenantCluster, tenant-network and VLAN controllers
// only, with a range of vlanTenants ids.
func vlanOptions(claimNamespace string) infracontroller.Options {
	o := infracontroller.DefaultOptions()
	o.Flavors, o.EnableStorageClasses, o.EnableCSIAccess, o.EnableNetworkPolicies = flavorsOff(), false, false, false
	o.EnableTenantClusters, o.EnableNetworks = true, true
	o.VLANs = vlan.Options{
		Template: vlan.TemplateBridge, Range: vlan.Range{First: 100, Last: 100 + vlanTenants - 1}, Bridge: "br-trunk",
		ClaimNamespace: claimNamespace, Workers: 8,
	}
	return o
}

func TestTenantVLANs(t *testing.T) {
	env, c, s := tenantClusterEnv(t)
	ctx := t.Context()
	claims := s.other("vlan-claims")
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: claims}}); err != nil {
		t.Fatal(err)
	}
	o := s.options(vlanOptions(claims))
	startController(t, env.Config, o, nil, -1)
	ids := map[string]int{}

	t.Run("tenants created at once get distinct ids and one claim each", func(t *testing.T) {
		createTenantClustersAtOnce(t, c, vlanTenants)
		poll.Until(t, wait, func() error {
			var err error
			ids, err = vlanIDs(ctx, c, vlanTenants)
			return err
		})
		poll.Until(t, wait, func() error { return checkClaims(ctx, c, claims, ids) })
	})
	t.Run("each namespace gets its NetworkAttachmentDefinition", func(t *testing.T) {
		for name, id := range ids {
			poll.Until(t, wait, func() error { return checkVLANNAD(ctx, c, s, o.VLANs, name, id) })
		}
	})
	t.Run("a hand-edited NetworkAttachmentDefinition is restored", func(t *testing.T) {
		have, err := get(ctx, c, networks.NetworkAttachmentDefinitionGVK, s.tenant("vt0"), vlan.DefaultNetworkName)
		if err != nil {
			t.Fatal(err)
		}
		if err := unstructured.SetNestedField(have.Object, `{"cniVersion":"0.3.1","type":"bridge","bridge":"br-trunk","vlan":1}`, "spec", "config"); err != nil {
			t.Fatal(err)
		}
		if err := c.Update(ctx, have); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error { return checkVLANNAD(ctx, c, s, o.VLANs, "vt0", ids["vt0"]) })
	})
	t.Run("a tenant network of the VLAN network's name is skipped", func(t *testing.T) {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.tenant("vt0"), Name: networks.ConfigMapName},
			Data:       map[string]string{vlan.DefaultNetworkName: bridgeConfig, "storage": bridgeConfig},
		}
		if err := c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error { return checkNAD(ctx, c, s.tenant("vt0"), "storage", bridgeConfig) })
		poll.Holds(t, time.Second, func() error { return checkVLANNAD(ctx, c, s, o.VLANs, "vt0", ids["vt0"]) })
	})
	t.Run("an exhausted range is a condition and an event", func(t *testing.T) {
		createTenantCluster(t, c, "late", nil)
		poll.Until(t, wait, func() error { return checkExhausted(ctx, c, "late") })
		poll.Until(t, wait, func() error {
			return checkWarning(ctx, c, &infrav1alpha1.TenantCluster{ObjectMeta: metav1.ObjectMeta{Name: "late"}}, infrav1alpha1.ReasonVLANRangeExhausted, nil)
		})
	})
	t.Run("an id is kept while a VM of a deleted tenant cluster still uses it, then reused", func(t *testing.T) {
		checkKeptWhileUsed(t, c, s, claims, "vt1", ids["vt1"])
	})
	t.Run("an id is kept while the namespace of a deleted tenant cluster terminates", func(t *testing.T) {
		checkKeptWhileTerminating(t, c, s, claims, "vt3", ids["vt3"])
		// The only free id.
		createTenantCluster(t, c, "after", nil)
		poll.Until(t, wait, func() error { return wantVLAN(ctx, c, "after", ids["vt3"]) })
	})
	t.Run("the id of a deleted tenant cluster is released with its namespace and reused", func(t *testing.T) {
		deleteTenantCluster(t, c, "vt2")
		poll.Until(t, time.Minute, func() error { return claimAbsent(ctx, c, claims, ids["vt2"]) })
		createTenantCluster(t, c, "next", nil)
		poll.Until(t, wait, func() error { return wantVLAN(ctx, c, "next", ids["vt2"]) })
	})
}

// createTenantClustersAtOnce creates TenantClusters vt0 ... vt<n-1> from
// n goroutines.
func createTenantClustersAtOnce(t *testing.T, c ctrlruntimeclient.Client, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			name := "vt" + strconv.Itoa(i)
			errs[i] = c.Create(context.Background(), &infrav1alpha1.TenantCluster{
				ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: infrav1alpha1.TenantClusterSpec{ID: name},
			})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// vlanIDs returns the VLAN ids of TenantClusters vt0 ... vt<n-1> once
// each has a distinct one and VLANReady is true.
func vlanIDs(ctx context.Context, c ctrlruntimeclient.Client, n int) (map[string]int, error) {
	ids := map[string]int{}
	owner := map[int]string{}
	for i := range n {
		name := "vt" + strconv.Itoa(i)
		var tc infrav1alpha1.TenantCluster
		if err := c.Get(ctx, types.NamespacedName{Name: name}, &tc); err != nil {
			return nil, err
		}
		if !meta.IsStatusConditionTrue(tc.Status.Conditions, infrav1alpha1.ConditionVLANReady) || tc.Status.VLAN == nil {
			return nil, fmt.Errorf("TenantCluster %s: VLAN %+v, conditions %+v", name, tc.Status.VLAN, tc.Status.Conditions)
		}
		id := int(tc.Status.VLAN.ID)
		if other, taken := owner[id]; taken {
			return nil, fmt.Errorf("TenantClusters %s and %s both have VLAN %d", other, name, id)
		}
		if id < 100 || id >= 100+n || tc.Status.VLAN.NetworkAttachmentDefinition != vlan.DefaultNetworkName {
			return nil, fmt.Errorf("TenantCluster %s: VLAN %+v outside the range", name, tc.Status.VLAN)
		}
		owner[id], ids[name] = name, id
	}
	return ids, nil
}

// checkClaims checks that the claim namespace holds exactly one claim per
// TenantCluster of ids, for its id.
func checkClaims(ctx context.Context, c ctrlruntimeclient.Client, namespace string, ids map[string]int) error {
	var list coordinationv1.LeaseList
	if err := c.List(ctx, &list, ctrlruntimeclient.InNamespace(namespace)); err != nil {
		return err
	}
	if len(list.Items) != len(ids) {
		return fmt.Errorf("%d claims for %d tenant clusters", len(list.Items), len(ids))
	}
	for _, l := range list.Items {
		owner := l.Labels[tenantcluster.OwnerLabel]
		if want := "tenant-vlan-" + strconv.Itoa(ids[owner]); l.Name != want || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != owner {
			return fmt.Errorf("claim %s held by %q, want %s", l.Name, owner, want)
		}
	}
	return nil
}

// checkVLANNAD compares the NetworkAttachmentDefinition of TenantCluster
// name with the exact bridge configuration of id.
func checkVLANNAD(ctx context.Context, c ctrlruntimeclient.Client, s space, o vlan.Options, name string, id int) error {
	have, err := get(ctx, c, networks.NetworkAttachmentDefinitionGVK, s.tenant(name), vlan.DefaultNetworkName)
	if err != nil {
		return err
	}
	want := fmt.Sprintf(`{"cniVersion":"0.3.1","name":"tenant-vlan","type":"bridge","bridge":"%s","vlan":%d,"preserveDefaultVlan":false,"ipam":{}}`, o.Bridge, id)
	if got, _, _ := unstructured.NestedString(have.Object, "spec", "config"); got != want {
		return fmt.Errorf("NetworkAttachmentDefinition of %s: config %s, want %s", name, got, want)
	}
	if l := have.GetLabels(); l[networks.Label] != vlan.LabelValue || l[vlan.VLANLabel] != strconv.Itoa(id) || l[tenantcluster.OwnerLabel] != name {
		return fmt.Errorf("NetworkAttachmentDefinition of %s: labels %v", name, l)
	}
	return nil
}

// checkExhausted checks that TenantCluster name has no VLAN and says why.
func checkExhausted(ctx context.Context, c ctrlruntimeclient.Client, name string) error {
	if err := wantConditionReason(ctx, c, name, infrav1alpha1.ConditionVLANReady, infrav1alpha1.ReasonVLANRangeExhausted); err != nil {
		return err
	}
	return wantVLAN(ctx, c, name, 0)
}

// wantVLAN checks the VLAN id in the status of TenantCluster name; 0 for
// none.
func wantVLAN(ctx context.Context, c ctrlruntimeclient.Client, name string, id int) error {
	var tc infrav1alpha1.TenantCluster
	if err := c.Get(ctx, types.NamespacedName{Name: name}, &tc); err != nil {
		return err
	}
	got := 0
	if tc.Status.VLAN != nil {
		got = int(tc.Status.VLAN.ID)
	}
	if got != id {
		return fmt.Errorf("TenantCluster %s has VLAN %d, want %d", name, got, id)
	}
	return nil
}

// checkKeptWhileUsed deletes TenantCluster name while a VM in its
// namespace names the VLAN network and is held by a finalizer, drops the
// TenantCluster's finalizer by hand so that it goes while its namespace
// and VM stay, and checks that the id stays claimed (the waiting
// TenantCluster "late" does not get it) until the VM is gone, and then
// goes to "late".
func checkKeptWhileUsed(t *testing.T, c ctrlruntimeclient.Client, s space, claims, name string, id int) {
	t.Helper()
	ctx := t.Context()
	vm := object(tenantcluster.VirtualMachineGVK, s.tenant(name), "uses-vlan", nil, vmSpec())
	vm.SetFinalizers([]string{holdFinalizer})
	nets := []any{map[string]any{"name": "default", "multus": map[string]any{"networkName": vlan.DefaultNetworkName, "default": true}}}
	if err := unstructured.SetNestedSlice(vm.Object, nets, "spec", "template", "spec", "networks"); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, vm); err != nil {
		t.Fatal(err)
	}
	deleteTenantCluster(t, c, name)
	poll.Until(t, wait, func() error { return wantReason(ctx, c, name, infrav1alpha1.ReasonDeletingVirtualMachines) })
	dropFinalizers(t, c, name)
	// Two release rechecks.
	poll.Holds(t, 2*vlan.DefaultReleaseRecheck+time.Second, func() error {
		if err := c.Get(ctx, types.NamespacedName{Namespace: claims, Name: "tenant-vlan-" + strconv.Itoa(id)}, &coordinationv1.Lease{}); err != nil {
			return fmt.Errorf("the claim of VLAN %d, still used by a VM: %w", id, err)
		}
		return checkExhausted(ctx, c, "late")
	})
	if err := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(vm), vm); err != nil {
		t.Fatal(err)
	}
	vm.SetFinalizers(nil)
	if err := c.Update(ctx, vm); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, wait, func() error { return absentNAD(ctx, c, s.tenant(name), vlan.DefaultNetworkName) })
	poll.Until(t, wait, func() error { return wantVLAN(ctx, c, "late", id) })
}

// checkKeptWhileTerminating holds the namespace of TenantCluster name in
// Terminating with a finalizer, deletes the TenantCluster and drops its
// finalizer by hand once it waits for the namespace, and checks that the
// id stays claimed until the namespace is gone.
func checkKeptWhileTerminating(t *testing.T, c ctrlruntimeclient.Client, s space, claims, name string, id int) {
	t.Helper()
	ctx := t.Context()
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, types.NamespacedName{Name: s.tenant(name)}, ns); err != nil {
		t.Fatal(err)
	}
	ns.Finalizers = append(ns.Finalizers, holdFinalizer)
	if err := c.Update(ctx, ns); err != nil {
		t.Fatal(err)
	}
	deleteTenantCluster(t, c, name)
	poll.Until(t, time.Minute, func() error { return wantReason(ctx, c, name, infrav1alpha1.ReasonDeletingNamespace) })
	dropFinalizers(t, c, name)
	poll.Holds(t, 2*vlan.DefaultReleaseRecheck+time.Second, func() error {
		return c.Get(ctx, types.NamespacedName{Namespace: claims, Name: "tenant-vlan-" + strconv.Itoa(id)}, &coordinationv1.Lease{})
	})
	if err := c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(ns), ns); err != nil {
		t.Fatal(err)
	}
	ns.Finalizers = nil
	if err := c.Update(ctx, ns); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, time.Minute, func() error { return claimAbsent(ctx, c, claims, id) })
}

// dropFinalizers removes the finalizers of TenantCluster name and waits
// until it is gone.
func dropFinalizers(t *testing.T, c ctrlruntimeclient.Client, name string) {
	t.Helper()
	ctx := t.Context()
	var tc infrav1alpha1.TenantCluster
	if err := c.Get(ctx, types.NamespacedName{Name: name}, &tc); err != nil {
		t.Fatal(err)
	}
	tc.Finalizers = nil
	if err := c.Update(ctx, &tc); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, wait, func() error {
		err := c.Get(ctx, types.NamespacedName{Name: name}, &infrav1alpha1.TenantCluster{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("TenantCluster %s still there (get: %w)", name, err)
	})
}

// deleteTenantCluster deletes TenantCluster name.
func deleteTenantCluster(t *testing.T, c ctrlruntimeclient.Client, name string) {
	t.Helper()
	if err := c.Delete(t.Context(), &infrav1alpha1.TenantCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

// claimAbsent checks that the claim of id is gone.
func claimAbsent(ctx context.Context, c ctrlruntimeclient.Client, namespace string, id int) error {
	err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: "tenant-vlan-" + strconv.Itoa(id)}, &coordinationv1.Lease{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("the claim of VLAN %d is still there (get: %w)", id, err)
}
