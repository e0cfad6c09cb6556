package tenantcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
)

// OwnerEvents records events about a tenant namespace on the TenantCluster
// that owns it (the namespace's OwnerLabel), where `kubectl describe
// tenantcluster` shows them. A namespace without an owner gets none.
type OwnerEvents struct {
	// Reader reads the Namespace and the TenantCluster's metadata; an
	// uncached reader, as events are rare.
	Reader ctrlruntimeclient.Reader
	// Recorder records the events.
	Recorder events.EventRecorder
}

// Eventf records the event on the owner of namespace. A failure to find
// the owner is logged, never returned: the event is a courtesy.
func (o *OwnerEvents) Eventf(ctx context.Context, namespace, eventtype, reason, action, note string, args ...any) {
	ref, err := o.owner(ctx, namespace)
	if err != nil {
		log.FromContext(ctx).Info("no event recorded on the owner of the tenant namespace", "namespace", namespace, "reason", reason, "error", err.Error())
		return
	}
	if ref != nil {
		o.Recorder.Eventf(ref, nil, eventtype, reason, action, note, args...)
	}
}

// owner returns a reference to the TenantCluster that owns namespace; nil
// when the namespace names none.
func (o *OwnerEvents) owner(ctx context.Context, namespace string) (*corev1.ObjectReference, error) {
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	if err := o.Reader.Get(ctx, ctrlruntimeclient.ObjectKey{Name: namespace}, ns); err != nil {
		return nil, fmt.Errorf("failed to get namespace %s: %w", namespace, err)
	}
	name := ns.Labels[OwnerLabel]
	if name == "" {
		return nil, nil
	}
	tc := &metav1.PartialObjectMetadata{}
	gvk := infrav1alpha1.GroupVersion.WithKind("TenantCluster")
	tc.SetGroupVersionKind(gvk)
	if err := o.Reader.Get(ctx, ctrlruntimeclient.ObjectKey{Name: name}, tc); err != nil {
		return nil, fmt.Errorf("failed to get TenantCluster %s: %w", name, err)
	}
	apiVersion, kind := gvk.ToAPIVersionAndKind()
	return &corev1.ObjectReference{APIVersion: apiVersion, Kind: kind, Name: tc.Name, UID: tc.UID, ResourceVersion: tc.ResourceVersion}, nil
}
