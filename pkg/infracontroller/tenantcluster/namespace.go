package tenantcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
)

// ensureNamespace creates the namespace of tc, or checks that an existing
// one is not owned by another TenantCluster and adopts it, and records the
// options of tc on it. An existing namespace gets a merge patch of its
// label and annotation only: a merge patch merges maps key by key, so it
// needs no resourceVersion and keeps what others wrote.
func (r *Reconciler) ensureNamespace(ctx context.Context, tc *infrav1alpha1.TenantCluster) error {
	name := r.Namespace(tc)
	options, err := tc.Spec.Options.Annotation()
	if err != nil {
		return err
	}
	var ns corev1.Namespace
	err = r.Client.Get(ctx, types.NamespacedName{Name: name}, &ns)
	if apierrors.IsNotFound(err) {
		ns = corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{OwnerLabel: tc.Name}}}
		setOptions(&ns, options)
		//writepath:direct the namespace is created when a read found none; AlreadyExists is an error the next reconcile resolves
		if err := r.Client.Create(ctx, &ns); err != nil {
			return fmt.Errorf("failed to create namespace %s: %w", name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("failed to get namespace %s: %w", name, err)
	}
	if owner := ns.Labels[OwnerLabel]; owner != "" && owner != tc.Name {
		return fmt.Errorf("namespace %s belongs to TenantCluster %s", name, owner)
	}
	if !ns.DeletionTimestamp.IsZero() {
		return fmt.Errorf("namespace %s is being deleted", name)
	}
	if ns.Labels[OwnerLabel] == tc.Name && ns.Annotations[infrav1alpha1.OptionsAnnotation] == options {
		return nil
	}
	base := ns.DeepCopy()
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[OwnerLabel] = tc.Name
	setOptions(&ns, options)
	//writepath:direct the owner label and options annotation set by merge patch, keeping what others wrote to the namespace
	if err := r.Client.Patch(ctx, &ns, ctrlruntimeclient.MergeFrom(base)); err != nil {
		return fmt.Errorf("failed to patch namespace %s: %w", name, err)
	}
	return nil
}

// setOptions sets the options annotation of ns, removing it for "".
func setOptions(ns *corev1.Namespace, options string) {
	if options == "" {
		delete(ns.Annotations, infrav1alpha1.OptionsAnnotation)
		return
	}
	if ns.Annotations == nil {
		ns.Annotations = map[string]string{}
	}
	ns.Annotations[infrav1alpha1.OptionsAnnotation] = options
}
