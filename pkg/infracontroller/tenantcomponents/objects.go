package tenantcomponents

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// configHash identifies what the pods read at start without revealing it:
// the first 16 hex digits of the SHA-256 of the parts (the two kubeconfigs,
// then any startup configuration), each prefixed by its length so the
// split between them counts.
func configHash(parts ...[]byte) string {
	h := sha256.New()
	for _, b := range parts {
		_, _ = fmt.Fprintf(h, "%d:", len(b))
		_, _ = h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// remove deletes the component's Deployment and ConfigMap in namespace
// when they are ours.
func (r *Reconciler) remove(ctx context.Context, namespace string) error {
	if r.Component.ConfigMap != "" {
		if err := r.removeOne(ctx, r.access, &corev1.ConfigMap{}, namespace, r.Component.ConfigMap); err != nil {
			return err
		}
	}
	return r.removeOne(ctx, r.Reader, &appsv1.Deployment{}, namespace, r.Component.Deployment)
}

// removeOne reads the object namespace/name into obj with reader and
// deletes that version when it is ours.
func (r *Reconciler) removeOne(ctx context.Context, reader ctrlruntimeclient.Reader, obj ctrlruntimeclient.Object, namespace, name string) error {
	return tenant.Target(reader, r.APIReader, r.Writer).GetAndDelete(ctx, types.NamespacedName{Namespace: namespace, Name: name}, obj,
		"an object of the component: the tenant kubeconfig is gone", ctrlruntimeclient.PropagationPolicy("Background"))
}
