package infracontroller_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/flavors"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantcluster"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// holdFinalizer keeps a test VirtualMachine until the test releases it, as
// virt-controller would while it stops the VM.
const holdFinalizer = "test.kkp-kubevirt.io/hold"

// tenantClusterEnv returns the shared plane with kube-controller-manager
// (its client knows TenantClusters) and a space of the test's own there.
// When the test ends, after its infra-controller has stopped, every
// TenantCluster goes without its teardown (see forgetTenantClusters): the
// TenantCluster controller of a later test would take up any left.
func tenantClusterEnv(t *testing.T) (*envtest.Env, ctrlruntimeclient.Client, space) {
	t.Helper()
	env := gcPlane.Env(t)
	t.Cleanup(func() { forgetTenantClusters(t, env.Client) })
	return env, env.Client, newSpace(t, env)
}

// forgetTenantClusters deletes every TenantCluster with its finalizers
// dropped, so that nothing tears down its namespace: what is left there
// belongs to a prefix no later test uses.
func forgetTenantClusters(tb testing.TB, c ctrlruntimeclient.Client) {
	tb.Helper()
	ctx := context.Background()
	var list infrav1alpha1.TenantClusterList
	if err := c.List(ctx, &list); err != nil {
		tb.Errorf("failed to list the TenantClusters left: %v", err)
		return
	}
	drop := ctrlruntimeclient.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
	for i := range list.Items {
		tc := &list.Items[i]
		if err := c.Delete(ctx, tc); ctrlruntimeclient.IgnoreNotFound(err) != nil {
			tb.Errorf("failed to delete TenantCluster %s: %v", tc.Name, err)
		}
		if err := c.Patch(ctx, tc, drop); ctrlruntimeclient.IgnoreNotFound(err) != nil {
			tb.Errorf("failed to drop the finalizers of TenantCluster %s: %v", tc.Name, err)
		}
	}
}

func TestTenantClusterLifecycle(t *testing.T) {
	env, c, s := tenantClusterEnv(t)
	o := s.options(infracontroller.DefaultOptions())
	o.EnableTenantClusters = true
	o.EnableStorageClasses, o.EnableCSIAccess, o.EnableNetworkPolicies = false, false, false
	startController(t, env.Config, o, nil, 0)
	ctx := t.Context()
	// The infra control plane stands in for the tenant cluster: the
	// kubeconfig must parse and answer for KubeconfigReady to be true.
	kubeconfig := env.KubeconfigBytes
	if err := c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "abc-kubeconfig"},
		Data:       map[string][]byte{"config": kubeconfig},
	}); err != nil {
		t.Fatal(err)
	}

	t.Run("create makes the namespace, the flavors and the kubeconfig copy", func(t *testing.T) {
		createTenantCluster(t, c, "abc", &infrav1alpha1.SecretKeyReference{Namespace: "default", Name: "abc-kubeconfig", Key: "config"})
		poll.Until(t, wait, func() error {
			var ns corev1.Namespace
			if err := c.Get(ctx, types.NamespacedName{Name: s.tenant("abc")}, &ns); err != nil {
				return err
			}
			if got := ns.Labels[tenantcluster.OwnerLabel]; got != "abc" {
				return fmt.Errorf("owner label = %q, want abc", got)
			}
			for _, b := range builtins {
				if err := hasCopy(ctx, c, b.gvk, s.tenant("abc"), b.name, nil, b.spec); err != nil {
					return err
				}
			}
			var secret corev1.Secret
			if err := c.Get(ctx, types.NamespacedName{Namespace: s.tenant("abc"), Name: "tenant-kubeconfig"}, &secret); err != nil {
				return err
			}
			if diff := cmp.Diff(map[string][]byte{"kubeconfig": kubeconfig}, secret.Data); diff != "" {
				return fmt.Errorf("kubeconfig copy (-want +got):\n%s", diff)
			}
			return wantConditions(ctx, c, "abc", map[string]metav1.ConditionStatus{
				infrav1alpha1.ConditionNamespaceReady:  metav1.ConditionTrue,
				infrav1alpha1.ConditionKubeconfigReady: metav1.ConditionTrue,
				infrav1alpha1.ConditionConfigReady:     metav1.ConditionTrue,
				infrav1alpha1.ConditionReady:           metav1.ConditionTrue,
			})
		})
	})

	t.Run("a missing kubeconfig Secret is reported", func(t *testing.T) {
		createTenantCluster(t, c, "nokc", &infrav1alpha1.SecretKeyReference{Namespace: "default", Name: "missing"})
		poll.Until(t, wait, func() error {
			if err := wantConditionReason(ctx, c, "nokc", infrav1alpha1.ConditionReady, infrav1alpha1.ReasonKubeconfigSecretMissing); err != nil {
				return err
			}
			return wantConditions(ctx, c, "nokc", map[string]metav1.ConditionStatus{
				infrav1alpha1.ConditionNamespaceReady:  metav1.ConditionTrue,
				infrav1alpha1.ConditionKubeconfigReady: metav1.ConditionFalse,
				infrav1alpha1.ConditionReady:           metav1.ConditionFalse,
			})
		})
	})

	t.Run("images for a switched-off image cache are reported", func(t *testing.T) {
		tc := &infrav1alpha1.TenantCluster{
			ObjectMeta: metav1.ObjectMeta{Name: "imgs"},
			Spec: infrav1alpha1.TenantClusterSpec{ID: "imgs", Images: []infrav1alpha1.Image{
				{Name: "ubuntu", URL: "http://images.example.com/u.img", Size: resource.MustParse("1Gi")},
			}},
		}
		if err := c.Create(ctx, tc); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error {
			return wantConditionReason(ctx, c, "imgs", infrav1alpha1.ConditionConfigReady, "FeatureOff")
		})
	})

	t.Run("options switch flavor sets off for one cluster only", func(t *testing.T) { checkOptions(t, c, s) })

	t.Run("delete removes the VMs first, then the namespace", func(t *testing.T) { checkDeletion(t, c, s) })
}

func createTenantCluster(tb testing.TB, c ctrlruntimeclient.Client, id string, ref *infrav1alpha1.SecretKeyReference) {
	tb.Helper()
	tc := &infrav1alpha1.TenantCluster{
		ObjectMeta: metav1.ObjectMeta{Name: id},
		Spec:       infrav1alpha1.TenantClusterSpec{ID: id, KubeconfigSecretRef: ref},
	}
	if err := c.Create(context.Background(), tc); err != nil {
		tb.Fatalf("failed to create TenantCluster %s: %v", id, err)
	}
}

// wantConditions checks the statuses of the named conditions of a
// TenantCluster.
func wantConditions(ctx context.Context, c ctrlruntimeclient.Client, name string, want map[string]metav1.ConditionStatus) error {
	var tc infrav1alpha1.TenantCluster
	if err := c.Get(ctx, types.NamespacedName{Name: name}, &tc); err != nil {
		return err
	}
	got := map[string]metav1.ConditionStatus{}
	for typ := range want {
		if cond := meta.FindStatusCondition(tc.Status.Conditions, typ); cond != nil {
			got[typ] = cond.Status
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		return fmt.Errorf("TenantCluster %s conditions (-want +got):\n%s", name, diff)
	}
	return nil
}

// wantReason checks the reason of the Deleting condition of a
// TenantCluster.
func wantReason(ctx context.Context, c ctrlruntimeclient.Client, name, reason string) error {
	return wantConditionReason(ctx, c, name, infrav1alpha1.ConditionDeleting, reason)
}

// wantConditionReason checks the reason of condition typ of a TenantCluster.
func wantConditionReason(ctx context.Context, c ctrlruntimeclient.Client, name, typ, reason string) error {
	var tc infrav1alpha1.TenantCluster
	if err := c.Get(ctx, types.NamespacedName{Name: name}, &tc); err != nil {
		return err
	}
	cond := meta.FindStatusCondition(tc.Status.Conditions, typ)
	if cond == nil || cond.Reason != reason {
		return fmt.Errorf("TenantCluster %s %s condition = %+v, want reason %s", name, typ, cond, reason)
	}
	return nil
}

// checkOptions switches the instancetypes of TenantCluster opt off and on again.
func checkOptions(t *testing.T, c ctrlruntimeclient.Client, s space) {
	t.Helper()
	ctx := t.Context()
	tc := &infrav1alpha1.TenantCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "opt"},
		Spec:       infrav1alpha1.TenantClusterSpec{ID: "opt", Options: infrav1alpha1.TenantClusterOptions{Instancetypes: ptr.To(false)}},
	}
	if err := c.Create(ctx, tc); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, wait, func() error {
		for _, b := range builtins {
			if b.gvk == flavors.InstancetypeGVK {
				if err := isGone(ctx, c, b.gvk, s.tenant("opt"), b.name); err != nil {
					return err
				}
				continue
			}
			if err := hasCopy(ctx, c, b.gvk, s.tenant("opt"), b.name, nil, b.spec); err != nil {
				return err
			}
		}
		// The other cluster keeps every set.
		return hasCopy(ctx, c, flavors.InstancetypeGVK, s.tenant("abc"), "standard-2", nil, builtins[1].spec)
	})
	if err := c.Get(ctx, types.NamespacedName{Name: "opt"}, tc); err != nil {
		t.Fatal(err)
	}
	tc.Spec.Options = infrav1alpha1.TenantClusterOptions{}
	if err := c.Update(ctx, tc); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, wait, func() error {
		for _, b := range builtins {
			if err := hasCopy(ctx, c, b.gvk, s.tenant("opt"), b.name, nil, b.spec); err != nil {
				return err
			}
		}
		return nil
	})
}

// checkDeletion deletes TenantCluster abc while a VirtualMachine of it holds on.
func checkDeletion(t *testing.T, c ctrlruntimeclient.Client, s space) {
	t.Helper()
	ctx := t.Context()
	vm := object(tenantcluster.VirtualMachineGVK, s.tenant("abc"), "vm-1", nil, vmSpec())
	vm.SetFinalizers([]string{holdFinalizer})
	if err := c.Create(ctx, vm); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, &infrav1alpha1.TenantCluster{ObjectMeta: metav1.ObjectMeta{Name: "abc"}}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, wait, func() error {
		got, err := get(ctx, c, tenantcluster.VirtualMachineGVK, s.tenant("abc"), "vm-1")
		if err != nil {
			return err
		}
		if got.GetDeletionTimestamp() == nil {
			return errors.New("the VirtualMachine is not being deleted")
		}
		return wantReason(ctx, c, "abc", "DeletingVirtualMachines")
	})
	poll.Holds(t, 2*time.Second, func() error {
		var ns corev1.Namespace
		if err := c.Get(ctx, types.NamespacedName{Name: s.tenant("abc")}, &ns); err != nil {
			return err
		}
		if !ns.DeletionTimestamp.IsZero() {
			return errors.New("the namespace is deleted while a VirtualMachine is left")
		}
		return nil
	})
	got, err := get(ctx, c, tenantcluster.VirtualMachineGVK, s.tenant("abc"), "vm-1")
	if err != nil {
		t.Fatal(err)
	}
	got.SetFinalizers(nil)
	if err := c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, time.Minute, func() error {
		if err := c.Get(ctx, types.NamespacedName{Name: s.tenant("abc")}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("namespace %s: got %w, want not found", s.tenant("abc"), err)
		}
		if err := c.Get(ctx, types.NamespacedName{Name: "abc"}, &infrav1alpha1.TenantCluster{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("TenantCluster abc: got %w, want not found", err)
		}
		return nil
	})
}
