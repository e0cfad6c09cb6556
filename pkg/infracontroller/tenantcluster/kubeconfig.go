package tenantcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"
)

// notReadyRecheck is how soon a TenantCluster whose kubeconfig is not
// usable is looked at again: a hand-placed Secret or a tenant cluster
// that comes up is not an event the controller watches.
const notReadyRecheck = 30 * time.Second

// readyRecheck is how often a usable kubeconfig is checked again, so that
// KubeconfigReady follows a tenant cluster that goes away.
const readyRecheck = 5 * time.Minute

// kubeconfigState is the verified state of the tenant kubeconfig of a
// TenantCluster: a reason of ConditionKubeconfigReady and its message, or
// err for a failure worth retrying with backoff.
type kubeconfigState struct {
	reason, message string
	err             error
}

func (s kubeconfigState) ready() bool {
	return s.err == nil && s.reason == infrav1alpha1.ReasonTenantReachable
}

// condition is ConditionKubeconfigReady for s.
func (s kubeconfigState) condition(generation int64) metav1.Condition {
	c := metav1.Condition{Type: infrav1alpha1.ConditionKubeconfigReady, Status: metav1.ConditionFalse,
		Reason: s.reason, Message: s.message, ObservedGeneration: generation}
	if s.err != nil {
		c.Reason, c.Message = infrav1alpha1.ReasonFailed, s.err.Error()
	}
	if s.ready() {
		c.Status = metav1.ConditionTrue
	}
	return c
}

// checkKubeconfig copies the referenced tenant kubeconfig into Secret
// KubeconfigSecret of the tenant namespace, then checks that the
// kubeconfig there (copied, or put there by hand when the spec references
// none) parses and that the tenant cluster answers with it.
func (r *Reconciler) checkKubeconfig(ctx context.Context, tc *infrav1alpha1.TenantCluster) kubeconfigState {
	namespace := r.Namespace(tc)
	data, s, ok := r.placedKubeconfig(ctx, tc)
	if !ok {
		return s
	}
	host, err := r.probe(ctx, namespace, data)
	switch {
	case errors.Is(err, kubeconfig.ErrInvalid):
		return kubeconfigState{reason: infrav1alpha1.ReasonKubeconfigInvalid, message: err.Error()}
	case apierrors.IsUnauthorized(err):
		return kubeconfigState{reason: infrav1alpha1.ReasonTenantUnauthorized,
			message: fmt.Sprintf("the tenant cluster at %s refuses the kubeconfig's credentials (401 Unauthorized): replace them", host)}
	case apierrors.IsForbidden(err):
		return kubeconfigState{reason: infrav1alpha1.ReasonTenantForbidden,
			message: fmt.Sprintf("the tenant cluster at %s forbids the kubeconfig's user to read /version (403 Forbidden): the user needs the system:public-info-viewer ClusterRole at least", host)}
	case err != nil:
		return kubeconfigState{reason: infrav1alpha1.ReasonTenantUnreachable,
			message: fmt.Sprintf("the tenant cluster at %s does not answer: %v", host, err)}
	}
	return kubeconfigState{reason: infrav1alpha1.ReasonTenantReachable, message: "the tenant kubeconfig parses and the tenant cluster answers"}
}

// placedKubeconfig returns the tenant kubeconfig of the namespace of tc:
// the copy of the referenced one, or the one put there by hand when the
// spec references none. ok is false when there is none to use; s tells
// why.
func (r *Reconciler) placedKubeconfig(ctx context.Context, tc *infrav1alpha1.TenantCluster) (data []byte, s kubeconfigState, ok bool) {
	if tc.Spec.KubeconfigSecretRef != nil {
		return r.copyKubeconfig(ctx, tc)
	}
	namespace := r.Namespace(tc)
	data, err := tenant.SecretData(ctx, r.APIReader, namespace, r.KubeconfigSecret, r.KubeconfigSecretKey)
	switch {
	case isMissingKey(err):
		return nil, kubeconfigState{reason: infrav1alpha1.ReasonKubeconfigInvalid, message: err.Error()}, false
	case err != nil:
		return nil, kubeconfigState{err: err}, false
	case data == nil:
		return nil, kubeconfigState{reason: infrav1alpha1.ReasonKubeconfigMissing, message: fmt.Sprintf(
			"spec.kubeconfigSecretRef is not set and namespace %s has no Secret %s: no controller can reach the tenant cluster", namespace, r.KubeconfigSecret)}, false
	}
	return data, kubeconfigState{}, true
}

// isMissingKey tells the error of tenant.SecretData for a Secret without
// the key.
func isMissingKey(err error) bool { return errors.Is(err, tenant.ErrNoSecretKey) }

// probe checks that the tenant cluster of namespace answers with the
// kubeconfig and returns the API server it names. A kubeconfig that cannot
// be used is kubeconfig.ErrInvalid.
func (r *Reconciler) probe(ctx context.Context, namespace string, data []byte) (host string, err error) {
	return r.Connections.Probe(ctx, namespace, data)
}

// copyKubeconfig copies the referenced kubeconfig into the namespace and
// returns it; ok is false when there is none to copy, s tells why.
func (r *Reconciler) copyKubeconfig(ctx context.Context, tc *infrav1alpha1.TenantCluster) (data []byte, s kubeconfigState, ok bool) {
	ref := tc.Spec.KubeconfigSecretRef
	key := ref.Key
	if key == "" {
		key = DefaultKubeconfigKey
	}
	var src corev1.Secret
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, &src); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, kubeconfigState{reason: infrav1alpha1.ReasonKubeconfigSecretMissing,
				message: fmt.Sprintf("spec.kubeconfigSecretRef: Secret %s/%s does not exist", ref.Namespace, ref.Name)}, false
		}
		return nil, kubeconfigState{err: fmt.Errorf("failed to get the kubeconfig Secret %s/%s: %w", ref.Namespace, ref.Name, err)}, false
	}
	data, found := src.Data[key]
	if !found {
		return nil, kubeconfigState{reason: infrav1alpha1.ReasonKubeconfigSecretMissing,
			message: fmt.Sprintf("spec.kubeconfigSecretRef: Secret %s/%s has no key %q", ref.Namespace, ref.Name, key)}, false
	}
	if err := r.writeKubeconfig(ctx, r.Namespace(tc), data); err != nil {
		return nil, kubeconfigState{err: err}, false
	}
	return data, kubeconfigState{}, true
}

// writeKubeconfig creates Secret KubeconfigSecret of namespace holding
// data, or patches its key when it holds something else. The merge patch
// sets that key alone and needs no resourceVersion.
func (r *Reconciler) writeKubeconfig(ctx context.Context, namespace string, data []byte) error {
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
		//writepath:direct the kubeconfig copy is created when an uncached read found none, without package apply's hash annotation of its data
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
	base := dst.DeepCopy()
	if dst.Data == nil {
		dst.Data = map[string][]byte{}
	}
	dst.Data[r.KubeconfigSecretKey] = data
	//writepath:direct package apply would record a hash of the kubeconfig in an annotation; one data key is set by merge patch instead
	if err := r.Client.Patch(ctx, &dst, ctrlruntimeclient.MergeFrom(base)); err != nil {
		return fmt.Errorf("failed to patch Secret %s/%s: %w", namespace, r.KubeconfigSecret, err)
	}
	return nil
}
