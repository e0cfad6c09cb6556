package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/flavors"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// tenantClusterName names the demo's TenantCluster; its id makes the infra
// namespace infraNamespace.
const tenantClusterName = "demo"

// kubeconfigSecret holds the user cluster's kubeconfig on the infra
// cluster, where a Kubermatic seed would keep it.
var kubeconfigSecret = ctrlruntimeclient.ObjectKey{Namespace: "kubermatic", Name: "demo-kubeconfig"}

// runInfraController runs the infra-controller against the infra cluster
// until ctx ends, with the features the demo shows switched on.
func runInfraController(ctx context.Context, cl *clusters) error {
	o := infracontroller.DefaultOptions()
	o.EnableTenantClusters, o.EnableCSINodePlugin, o.EnableImageCache = true, true, true
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return fmt.Errorf("failed to build the infra-controller scheme: %w", err)
	}
	mgr, err := ctrl.NewManager(cl.infra.Config, ctrl.Options{
		Scheme:  scheme,
		Cache:   infracontroller.CacheOptions(o),
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		return fmt.Errorf("failed to create the infra-controller manager: %w", err)
	}
	if _, err := infracontroller.Setup(mgr, o); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// createTenantCluster stores the user cluster's kubeconfig on the infra
// cluster and creates the TenantCluster that owns infraNamespace.
func createTenantCluster(ctx context.Context, cl *clusters) error {
	return createAll(ctx, cl.infra.Client,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kubeconfigSecret.Namespace}},
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: kubeconfigSecret.Namespace, Name: kubeconfigSecret.Name},
			Data:       map[string][]byte{"kubeconfig": cl.user.KubeconfigBytes},
		},
		&infrav1alpha1.TenantCluster{
			ObjectMeta: metav1.ObjectMeta{Name: tenantClusterName},
			Spec: infrav1alpha1.TenantClusterSpec{
				ID:                  strings.TrimPrefix(infraNamespace, tenant.DefaultPrefix),
				KubeconfigSecretRef: &infrav1alpha1.SecretKeyReference{Namespace: kubeconfigSecret.Namespace, Name: kubeconfigSecret.Name},
			},
		},
	)
}

// waitTenantReady waits until the infra-controller has prepared the
// tenant: its namespace with the built-in preset, and in the user cluster
// the StorageClass of the initialized infra class and the CSI driver.
func waitTenantReady(ctx context.Context, o options, cl *clusters) error {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	checks := []struct {
		c   ctrlruntimeclient.Client
		obj ctrlruntimeclient.Object
	}{
		{cl.infra.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: infraNamespace}}},
		{cl.infra.Client, presetObject()},
		{cl.user.Client, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "kubevirt-standard"}}},
		{cl.user.Client, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "csi.kubevirt.io"}}},
	}
	for _, check := range checks {
		for {
			err := check.c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(check.obj), check.obj)
			if err == nil {
				break
			}
			if !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
				return fmt.Errorf("failed to get %s: %w", check.obj.GetName(), err)
			}
			if err := sleep(ctx, 250*time.Millisecond); err != nil {
				return fmt.Errorf("the tenant is not ready within %s: %s is missing", o.timeout, check.obj.GetName())
			}
		}
	}
	o.stepf("TenantCluster %s ready: namespace %s with preset %s on the infra cluster; StorageClass kubevirt-standard and CSI driver csi.kubevirt.io in the user cluster",
		tenantClusterName, infraNamespace, flavors.StandardPresetName)
	return nil
}

// presetObject is the built-in preset in the tenant namespace.
func presetObject() ctrlruntimeclient.Object {
	u := flavors.StandardPreset()
	u.SetNamespace(infraNamespace)
	return u
}

// deleteTenantAndVerify deletes the TenantCluster and waits until neither
// cluster holds anything the infra-controller made for it.
func deleteTenantAndVerify(ctx context.Context, o options, cl *clusters) error {
	o.stepf("Deleting TenantCluster %s", tenantClusterName)
	tc := &infrav1alpha1.TenantCluster{ObjectMeta: metav1.ObjectMeta{Name: tenantClusterName}}
	if err := cl.infra.Client.Delete(ctx, tc); ctrlruntimeclient.IgnoreNotFound(err) != nil {
		return fmt.Errorf("failed to delete the TenantCluster: %w", err)
	}
	for {
		left, err := tenantLeftovers(ctx, cl)
		if err != nil {
			return err
		}
		if left == "" {
			o.stepf("Nothing left of the tenant: namespace %s is gone, and so are the user cluster's kubevirt-standard StorageClass and CSI driver", infraNamespace)
			return nil
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return errors.New("still left after the timeout: " + left)
		}
	}
}

// tenantLeftovers describes what of the TenantCluster still exists.
func tenantLeftovers(ctx context.Context, cl *clusters) (string, error) {
	var parts []string
	for _, check := range []struct {
		c   ctrlruntimeclient.Client
		obj ctrlruntimeclient.Object
	}{
		{cl.infra.Client, &infrav1alpha1.TenantCluster{ObjectMeta: metav1.ObjectMeta{Name: tenantClusterName}}},
		{cl.infra.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: infraNamespace}}},
		{cl.user.Client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kubevirt-csi-driver"}}},
		{cl.user.Client, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "csi.kubevirt.io"}}},
	} {
		err := check.c.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(check.obj), check.obj)
		if ctrlruntimeclient.IgnoreNotFound(err) != nil {
			return "", fmt.Errorf("failed to get %s: %w", check.obj.GetName(), err)
		}
		if err == nil {
			parts = append(parts, fmt.Sprintf("%T %s", check.obj, check.obj.GetName()))
		}
	}
	var classes storagev1.StorageClassList
	if err := cl.user.Client.List(ctx, &classes, ctrlruntimeclient.MatchingLabels{tenant.ManagedByLabel: tenant.ManagedByValue}); err != nil {
		return "", fmt.Errorf("failed to list the user cluster's StorageClasses: %w", err)
	}
	for _, sc := range classes.Items {
		parts = append(parts, "StorageClass "+sc.Name)
	}
	return strings.Join(parts, ", "), nil
}
