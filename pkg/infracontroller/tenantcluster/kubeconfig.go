package tenantcluster

import (
	"bytes"
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// ensureKubeconfig copies the referenced tenant kubeconfig into Secret
// KubeconfigSecret of the tenant namespace. Without a reference there
// is nothing to do: a Secret put there by hand keeps working.
func (r *Reconciler) ensureKubeconfig(ctx context.Context, tc *infrav1alpha1.TenantCluster) error {
	ref := tc.Spec.KubeconfigSecretRef
	if ref == nil {
		return nil
	}
	key := ref.Key
	if key == "" {
		key = DefaultKubeconfigKey
	}
	var src corev1.Secret
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, &src); err != nil {
		return fmt.Errorf("failed to get the kubeconfig Secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	data, ok := src.Data[key]
	if !ok {
		return fmt.Errorf("the kubeconfig Secret %s/%s has no key %q", ref.Namespace, ref.Name, key)
	}
	namespace := r.Namespace(tc)
	var dst corev1.Secret
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: r.KubeconfigSecret}, &dst)
	if apierrors.IsNotFound(err) {
		dst = corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: namespace,
				Name:      r.KubeconfigSecret,
				Labels:    map[string]string{tenant.ManagedByLabel: tenant.ManagedByValue},
			},
			Data: map[string][]byte{r.KubeconfigSecretKey: data},
		}
		if err := r.Client.Create(ctx, &dst); err != nil {
			return fmt.Errorf("failed to create Secret %s/%s: %w", namespace, r.KubeconfigSecret, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to get Secret %s/%s: %w", namespace, r.KubeconfigSecret, err)
	}
	if bytes.Equal(dst.Data[r.KubeconfigSecretKey], data) {
		return nil
	}
	if dst.Data == nil {
		dst.Data = map[string][]byte{}
	}
	dst.Data[r.KubeconfigSecretKey] = data
	if err := r.Client.Update(ctx, &dst); err != nil {
		return fmt.Errorf("failed to update Secret %s/%s: %w", namespace, r.KubeconfigSecret, err)
	}
	return nil
}
