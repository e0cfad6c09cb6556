package tenantcomponents

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"
)

// SwitchedOff removes, once the manager has started (and won the leader
// election), what switched-off components left in tenant namespaces: their
// Deployments and ConfigMaps, and the cluster-wide ClusterRoleBinding and
// ClusterRole of their access profiles, so that switching a component off
// stops it instead of leaving it running with its old settings. Only
// objects carrying our managed-by label and the component's names are
// deleted; the namespaced access objects (ServiceAccount, Role, Secrets)
// stay until their namespace goes. Failing calls are retried with backoff
// until they succeed or the manager stops.
type SwitchedOff struct {
	// Reader lists from the API server (the manager's API reader: the
	// caches hold no objects of switched-off components).
	Reader ctrlruntimeclient.Reader
	// Writer deletes.
	Writer ctrlruntimeclient.Writer
	// Tenants recognises tenant namespaces.
	Tenants tenant.Matcher
	// Components are the switched-off components.
	Components []Component
}

// Start implements manager.Runnable.
func (s *SwitchedOff) Start(ctx context.Context) error {
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 1 << 30, Cap: 30 * time.Second}
	err := wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		if err := s.removeAll(ctx); err != nil {
			log.FromContext(ctx).Error(err, "failed to remove the objects of switched-off components; retrying")
			return false, nil
		}
		return true, nil
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("failed to remove the objects of switched-off components: %w", err)
	}
	return nil
}

// removeAll deletes what every switched-off component left.
func (s *SwitchedOff) removeAll(ctx context.Context) error {
	for _, comp := range s.Components {
		ours := labels.SelectorFromSet(labels.Set{tenant.ManagedByLabel: tenant.ManagedByValue, addons.ControllerPodLabel: comp.Deployment})
		var deployments appsv1.DeploymentList
		if err := s.Reader.List(ctx, &deployments, ctrlruntimeclient.MatchingLabelsSelector{Selector: ours}); err != nil {
			return fmt.Errorf("failed to list the Deployments of %s: %w", comp.ControllerName, err)
		}
		for i := range deployments.Items {
			if err := s.remove(ctx, &deployments.Items[i], comp.Deployment); err != nil {
				return err
			}
		}
		if comp.ConfigMap != "" {
			var configMaps corev1.ConfigMapList
			if err := s.Reader.List(ctx, &configMaps, ctrlruntimeclient.MatchingLabelsSelector{Selector: ours}); err != nil {
				return fmt.Errorf("failed to list the ConfigMaps of %s: %w", comp.ControllerName, err)
			}
			for i := range configMaps.Items {
				if err := s.remove(ctx, &configMaps.Items[i], comp.ConfigMap); err != nil {
					return err
				}
			}
		}
		if len(comp.Access.ClusterRules) > 0 {
			name := comp.Access.ClusterObjectName()
			for _, obj := range []ctrlruntimeclient.Object{&rbacv1.ClusterRoleBinding{}, &rbacv1.ClusterRole{}} {
				if err := tenant.Target(s.Reader, s.Reader, s.Writer).GetAndDelete(ctx, ctrlruntimeclient.ObjectKey{Name: name}, obj, switchedOff); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// switchedOff says why SwitchedOff deletes.
const switchedOff = "an object of a switched-off component"

// remove deletes obj when it is ours, named name and in a tenant
// namespace.
func (s *SwitchedOff) remove(ctx context.Context, obj ctrlruntimeclient.Object, name string) error {
	if obj.GetName() != name || !s.Tenants.IsTenant(obj.GetNamespace()) {
		return nil
	}
	return tenant.Target(s.Reader, s.Reader, s.Writer).Delete(ctx, obj, switchedOff, ctrlruntimeclient.PropagationPolicy("Background"))
}
