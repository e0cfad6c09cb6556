package installer

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
)

// Pod security admission labels.
var podSecurityModes = []string{"enforce", "audit", "warn"}

// namespaceLabels are the labels of a namespace the installer manages.
func namespaceLabels(c components.Component, owned bool) map[string]string {
	labels := map[string]string{}
	for _, mode := range podSecurityModes {
		labels["pod-security.kubernetes.io/"+mode] = c.PodSecurity
	}
	if owned {
		for k, v := range components.OwnedLabels(c.Name) {
			labels[k] = v
		}
	}
	return labels
}

// NamespaceObject returns the namespace of a component as the installer
// creates it, for rendering.
func NamespaceObject(c components.Component) *corev1.Namespace {
	return &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: c.Namespace, Labels: namespaceLabels(c, true)},
	}
}

// ensureNamespace creates the managed namespace of c with its pod security
// labels. A namespace that exists and was not created by the installer only
// gets the pod security labels, so uninstall will not delete it.
func (i *Installer) ensureNamespace(ctx context.Context, c components.Component) error {
	ns := &corev1.Namespace{}
	owned := true
	err := i.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Name: c.Namespace}, ns)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("failed to get namespace %s: %w", c.Namespace, err)
	default:
		owned = ns.Labels[components.LabelManagedBy] == components.ManagedBy
	}
	apply := corev1ac.Namespace(c.Namespace).WithLabels(namespaceLabels(c, owned))
	if err := i.Client.Apply(ctx, apply, ctrlruntimeclient.FieldOwner(components.FieldManager), ctrlruntimeclient.ForceOwnership); err != nil {
		return fmt.Errorf("failed to apply namespace %s: %w", c.Namespace, err)
	}
	return nil
}

// deleteNamespace deletes the managed namespace of c if the installer
// created it; it reports whether a deletion is under way.
func (i *Installer) deleteNamespace(ctx context.Context, c components.Component, p printer) (bool, error) {
	ns := &corev1.Namespace{}
	if err := i.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Name: c.Namespace}, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("failed to get namespace %s: %w", c.Namespace, err)
	}
	if ns.Labels[components.LabelManagedBy] != components.ManagedBy {
		p.notef("namespace %s was not created by kubevirt-installer, leaving it", c.Namespace)
		return false, nil
	}
	if err := i.Client.Delete(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("failed to delete namespace %s: %w", c.Namespace, err)
	}
	p.notef("deleting namespace %s", c.Namespace)
	return true, nil
}

// waitNamespaceGone waits until the namespace is gone.
func (i *Installer) waitNamespaceGone(ctx context.Context, name string) error {
	gone := func(ctx context.Context) (bool, string, error) {
		err := i.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Name: name}, &corev1.Namespace{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return false, "", fmt.Errorf("failed to get namespace %s: %w", name, err)
		}
		return false, "terminating", nil
	}
	return i.Poller.Until(ctx, "deletion of namespace "+name, gone, nil)
}
