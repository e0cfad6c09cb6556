package infracontroller_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/imagecache"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/componentaccess"
	infraimagecache "github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/imagecache"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/netpol"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/networks"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/storageclass"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenantcluster"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// TestTenantClusterLeavesNothingBehind runs every feature for one
// TenantCluster configured through its spec, on an infra and a tenant
// control plane, deletes it, and then finds no object of ours on either.
func TestTenantClusterLeavesNothingBehind(t *testing.T) {
	infra := envtest.Start(t, envtest.WithControllerManager())
	tenantEnv := envtest.Start(t, envtest.WithCRDFiles(), envtest.WithControllerManager())
	if err := infrav1alpha1.AddToScheme(infra.Scheme); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ic, err := ctrlruntimeclient.New(infra.Config, ctrlruntimeclient.Options{Scheme: infra.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	tc := tenantEnv.Client
	o := infracontroller.DefaultOptions()
	o.EnableTenantClusters, o.EnableCSINodePlugin, o.EnableImageCache, o.EnableNetworks = true, true, true, true
	o.EnableCSIController, o.EnableCCM = true, true
	startController(t, infra.Config, o, nil, -1)

	// What an operator has before the cluster exists: an initialized infra
	// class, the tenant kubeconfig, and a class of the tenant's own.
	infraClass := &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: "fast", Annotations: map[string]string{storageclass.InitializeAnnotation: "true"}},
		Provisioner: "example.com/fast",
	}
	foreign := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "kubevirt-own"}, Provisioner: "example.com/own"}
	kubeconfigSecret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "full-kubeconfig"},
		Data:       map[string][]byte{"kubeconfig": tenantEnv.KubeconfigBytes},
	}
	for _, obj := range []ctrlruntimeclient.Object{infraClass, kubeconfigSecret} {
		if err := ic.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	if err := tc.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	if err := ic.Create(ctx, fullTenantCluster()); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, wait, func() error {
		return ic.Get(ctx, types.NamespacedName{Namespace: "cluster-full", Name: componentaccess.TokenSecretName}, &corev1.Secret{})
	})
	fillToken(t, infra, "cluster-full")
	poll.Until(t, wait, func() error {
		return ic.Get(ctx, types.NamespacedName{Namespace: "cluster-full", Name: componentaccess.CCM().TokenSecretName}, &corev1.Secret{})
	})
	fillProfileToken(t, infra, "cluster-full", componentaccess.CCM())

	t.Run("the spec reaches every feature", func(t *testing.T) { checkFullCluster(t, ic, tc) })

	vm := object(tenantcluster.VirtualMachineGVK, "cluster-full", "vm-1", nil, vmSpec())
	vm.SetFinalizers([]string{holdFinalizer})
	if err := ic.Create(ctx, vm); err != nil {
		t.Fatal(err)
	}
	if err := ic.Delete(ctx, &infrav1alpha1.TenantCluster{ObjectMeta: metav1.ObjectMeta{Name: "full"}}); err != nil {
		t.Fatal(err)
	}
	t.Run("the tenant cluster keeps its classes while VMs run", func(t *testing.T) {
		poll.Until(t, wait, func() error { return wantReason(ctx, ic, "full", "DeletingVirtualMachines") })
		poll.Holds(t, time.Second, func() error {
			return tc.Get(ctx, types.NamespacedName{Name: "kubevirt-fast"}, &storagev1.StorageClass{})
		})
	})
	got, err := get(ctx, ic, tenantcluster.VirtualMachineGVK, "cluster-full", "vm-1")
	if err != nil {
		t.Fatal(err)
	}
	got.SetFinalizers(nil)
	if err := ic.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	t.Run("afterwards nothing of ours is left on either cluster", func(t *testing.T) {
		poll.Until(t, time.Minute, func() error {
			if err := ic.Get(ctx, types.NamespacedName{Name: "full"}, &infrav1alpha1.TenantCluster{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("TenantCluster full: got %w, want not found", err)
			}
			for _, check := range []struct {
				env  *envtest.Env
				name string
			}{{infra, "infra"}, {tenantEnv, "tenant"}} {
				if err := nothingOfOurs(ctx, check.env.Config); err != nil {
					return fmt.Errorf("%s cluster: %w", check.name, err)
				}
			}
			return nil
		})
		for _, obj := range []ctrlruntimeclient.Object{foreign} {
			if err := tc.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(obj), obj); err != nil {
				t.Errorf("the tenant's own StorageClass: %v", err)
			}
		}
		if err := ic.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(kubeconfigSecret), &corev1.Secret{}); err != nil {
			t.Errorf("the referenced kubeconfig Secret is not ours to delete: %v", err)
		}
	})
}

// fullTenantCluster is TenantCluster full with an image, a network and a
// custom policy.
func fullTenantCluster() *infrav1alpha1.TenantCluster {
	return &infrav1alpha1.TenantCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "full"},
		Spec: infrav1alpha1.TenantClusterSpec{
			ID:                  "full",
			KubeconfigSecretRef: &infrav1alpha1.SecretKeyReference{Namespace: "default", Name: "full-kubeconfig"},
			Images: []infrav1alpha1.Image{{
				Name: "ubuntu", URL: "http://images.example.com/ubuntu.img", Size: resource.MustParse("10Gi"),
			}},
			Networks: []infrav1alpha1.Network{{
				Name:   "storage",
				Config: runtime.RawExtension{Raw: []byte(`{"cniVersion":"1.0.0","type":"bridge","bridge":"br-storage"}`)},
			}},
			NetworkPolicies: []infrav1alpha1.NetworkPolicy{{
				Name: "allow-monitoring",
				Spec: networkingv1.NetworkPolicySpec{
					PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
					Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{
						NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"name": "monitoring"}},
					}}}},
				},
			}},
		},
	}
}

// checkFullCluster waits until every feature has made its objects.
func checkFullCluster(t *testing.T, ic, tc ctrlruntimeclient.Client) {
	t.Helper()
	ctx := t.Context()
	poll.Until(t, wait, func() error {
		if _, err := get(ctx, ic, infraimagecache.DataVolumeGVK, "cluster-full", imagecache.NamedDataVolumeName("ubuntu")); err != nil {
			return fmt.Errorf("image DataVolume: %w", err)
		}
		nad, err := get(ctx, ic, networks.NetworkAttachmentDefinitionGVK, "cluster-full", "storage")
		if err != nil {
			return fmt.Errorf("network: %w", err)
		}
		if cfg, _, _ := unstructured.NestedString(nad.Object, "spec", "config"); !strings.Contains(cfg, `"br-storage"`) {
			return fmt.Errorf("network config = %s", cfg)
		}
		for _, name := range []string{"allow-monitoring", netpol.IsolationPolicyName} {
			if err := ic.Get(ctx, types.NamespacedName{Namespace: "cluster-full", Name: name}, &networkingv1.NetworkPolicy{}); err != nil {
				return fmt.Errorf("policy: %w", err)
			}
		}
		if err := tc.Get(ctx, types.NamespacedName{Name: "kubevirt-fast"}, &storagev1.StorageClass{}); err != nil {
			return fmt.Errorf("tenant class: %w", err)
		}
		if err := tc.Get(ctx, types.NamespacedName{Name: "csi.kubevirt.io"}, &storagev1.CSIDriver{}); err != nil {
			return fmt.Errorf("tenant CSIDriver: %w", err)
		}
		for _, name := range []string{addons.ControllerName, addons.CCMName} {
			if err := ic.Get(ctx, types.NamespacedName{Namespace: "cluster-full", Name: name}, &appsv1.Deployment{}); err != nil {
				return fmt.Errorf("deployment: %w", err)
			}
		}
		if err := ic.Get(ctx, types.NamespacedName{Name: componentaccess.CCM().ClusterObjectName()}, &rbacv1.ClusterRoleBinding{}); err != nil {
			return fmt.Errorf("CCM ClusterRoleBinding: %w", err)
		}
		return wantConditions(ctx, ic, "full", map[string]metav1.ConditionStatus{
			infrav1alpha1.ConditionNamespaceReady:  metav1.ConditionTrue,
			infrav1alpha1.ConditionKubeconfigReady: metav1.ConditionTrue,
			infrav1alpha1.ConditionConfigReady:     metav1.ConditionTrue,
		})
	})
}

// nothingOfOurs lists every kind the API server serves and reports any
// object that carries our ownership labels, and the tenant namespace.
func nothingOfOurs(ctx context.Context, cfg *rest.Config) error {
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = rest.NoWarnings{}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return err
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil {
		return fmt.Errorf("failed to discover the API: %w", err)
	}
	var found []string
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			return err
		}
		for _, res := range list.APIResources {
			if strings.Contains(res.Name, "/") || !slices.Contains(res.Verbs, "list") {
				continue
			}
			for _, selector := range []string{tenant.ManagedByLabel, tenantcluster.OwnerLabel} {
				items, err := mc.Resource(gv.WithResource(res.Name)).List(ctx, metav1.ListOptions{LabelSelector: selector})
				if err != nil {
					return fmt.Errorf("failed to list %s: %w", res.Name, err)
				}
				for _, item := range items.Items {
					found = append(found, fmt.Sprintf("%s %s/%s", res.Kind, item.Namespace, item.Name))
				}
			}
		}
	}
	if len(found) > 0 {
		return fmt.Errorf("left behind: %s", strings.Join(found, ", "))
	}
	return nil
}
