package catalog

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// maxNamed caps the tenant namespaces an error names.
const maxNamed = 20

// checkNamespace fails when namespace does not exist on the infra cluster,
// naming the tenant namespaces that do. A reader that may not read
// namespaces (a kubeconfig scoped to the tenant namespace) cannot tell; the
// listing then goes on, as the namespaced lists will say what it may read.
func checkNamespace(ctx context.Context, c ctrlruntimeclient.Reader, namespace string) error {
	err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Name: namespace}, &corev1.Namespace{})
	switch {
	case err == nil, apierrors.IsForbidden(err):
		return nil
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("failed to get namespace %s: %w", namespace, err)
	}
	return fmt.Errorf("namespace %q does not exist on the infra cluster; %s", namespace, tenantNamespaces(ctx, c))
}

// tenantNamespaces says which namespaces of the default tenant prefix the
// infra cluster has, or how to list them when the reader may not.
func tenantNamespaces(ctx context.Context, c ctrlruntimeclient.Reader) string {
	l := &corev1.NamespaceList{}
	if err := c.List(ctx, l); err != nil {
		return "list its namespaces with kubectl get namespaces"
	}
	matcher := tenant.Matcher{Prefix: tenant.DefaultPrefix}
	var names []string
	for _, ns := range l.Items {
		if matcher.IsTenant(ns.Name) {
			names = append(names, ns.Name)
		}
	}
	pattern := tenant.DefaultPrefix + "*"
	if len(names) == 0 {
		return fmt.Sprintf("it has no %s namespaces (kubectl get namespaces lists them all)", pattern)
	}
	slices.Sort(names)
	if len(names) > maxNamed {
		names = append(names[:maxNamed], fmt.Sprintf("and %d more", len(names)-maxNamed))
	}
	return fmt.Sprintf("its %s namespaces: %s", pattern, strings.Join(names, ", "))
}
