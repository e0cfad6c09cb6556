package csicontroller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// configHash identifies the two kubeconfigs without revealing them: the
// first 16 hex digits of the SHA-256 of both, each prefixed by its length
// so the split between them counts.
func configHash(tenantKubeconfig, infraKubeconfig []byte) string {
	h := sha256.New()
	for _, b := range [][]byte{tenantKubeconfig, infraKubeconfig} {
		_, _ = fmt.Fprintf(h, "%d:", len(b))
		_, _ = h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// remove deletes the CSI controller Deployment of namespace when it is
// ours.
func (r *Reconciler) remove(ctx context.Context, namespace string) error {
	var d appsv1.Deployment
	err := r.Reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: addons.ControllerName}, &d)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to get Deployment %s/%s: %w", namespace, addons.ControllerName, err)
	}
	if !tenant.IsManaged(&d) || !d.DeletionTimestamp.IsZero() {
		return nil
	}
	log.FromContext(ctx).Info("deleting the CSI controller: the tenant kubeconfig is gone", "deployment", addons.ControllerName)
	err = r.Writer.Delete(ctx, &d, ctrlruntimeclient.Preconditions{UID: &d.UID}, ctrlruntimeclient.PropagationPolicy("Background"))
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("failed to delete Deployment %s/%s: %w", namespace, addons.ControllerName, err)
	}
	return nil
}
