package installer

import (
	"context"
	"fmt"
	"slices"

	"helm.sh/helm/v3/pkg/release"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/crds"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/readiness"
)

// UninstallOptions configure Uninstall.
type UninstallOptions struct {
	// CRDs also deletes the CRDs of the charts (and with them every
	// remaining custom resource of their kinds).
	CRDs bool
}

// installed is a release found in the cluster.
type installed struct {
	components.Release
	rel *release.Release
}

// Uninstall removes the releases in an order that cannot deadlock on
// finalizers: first the operators' resources, waiting until the operators
// have removed what they deployed and released their finalizers; then
// operand objects the operators left behind (webhooks, APIServices); then
// the Helm releases, operators included, in reverse dependency order; then
// the namespaces the installer created; then, on request, the CRDs.
func (i *Installer) Uninstall(ctx context.Context, opts UninstallOptions) error {
	p := printer{w: i.Out}
	found, err := i.installedReleases()
	if err != nil {
		return err
	}
	steps := []uninstallStep{
		{"delete operator resources", i.deleteOperatorResources},
		{"delete leftover operand objects", i.deleteLeftovers},
		{"uninstall Helm releases", i.uninstallReleases},
		{"delete namespaces", i.deleteNamespaces},
	}
	if opts.CRDs {
		steps = append(steps, uninstallStep{"delete CRDs", i.deleteCRDs})
	}
	for n, s := range steps {
		p.stepf(n+1, len(steps), "%s", s.title)
		if err := s.run(ctx, found, p); err != nil {
			return err
		}
	}
	return nil
}

// uninstallStep is one phase of Uninstall over every installed release.
type uninstallStep struct {
	title string
	run   func(context.Context, []installed, printer) error
}

// installedReleases returns the releases present in the cluster, in reverse
// dependency order. A release of the same name that the installer did not
// create is an error.
func (i *Installer) installedReleases() ([]installed, error) {
	var out []installed
	for _, r := range slices.Backward(i.Releases) {
		rel, err := i.Helm.Last(r.Name, r.Namespace)
		if err != nil {
			return nil, err
		}
		if rel != nil && !ours(r, rel) {
			return nil, fmt.Errorf("release %s/%s exists but was not installed by kubevirt-installer; leaving it and everything after it", r.Namespace, r.Name)
		}
		out = append(out, installed{Release: r, rel: rel})
	}
	return out, nil
}

// operatorResources lists the operator resources in a release manifest.
func operatorResources(r installed) ([]*unstructured.Unstructured, error) {
	if r.rel == nil || r.Resource == nil {
		return nil, nil
	}
	var out []*unstructured.Unstructured
	for _, doc := range readiness.Documents(r.rel.Manifest) {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			return nil, fmt.Errorf("failed to parse the manifest of release %s: %w", r.Name, err)
		}
		if obj.GroupVersionKind().GroupKind() != r.Resource.GroupKind() {
			continue
		}
		obj.SetGroupVersionKind(r.Resource.GroupVersionKind)
		switch {
		case !r.Resource.Namespaced:
			obj.SetNamespace("")
		case obj.GetNamespace() == "":
			obj.SetNamespace(r.Namespace)
		}
		out = append(out, obj)
	}
	return out, nil
}

// deleteOperatorResources deletes the KubeVirt and CDI resources and waits
// until their operators have finished removing them.
func (i *Installer) deleteOperatorResources(ctx context.Context, found []installed, p printer) error {
	for _, r := range found {
		objs, err := operatorResources(r)
		if err != nil {
			return err
		}
		for _, obj := range objs {
			if err := i.deleteAndWait(ctx, obj, p); err != nil {
				return fmt.Errorf("%s: %w", r.Name, err)
			}
		}
	}
	return nil
}

// deleteAndWait deletes obj and waits until it is gone, reporting the
// finalizers that hold it.
func (i *Installer) deleteAndWait(ctx context.Context, obj *unstructured.Unstructured, p printer) error {
	what := obj.GetKind() + " " + obj.GetName()
	if obj.GetNamespace() != "" {
		what = obj.GetKind() + " " + obj.GetNamespace() + "/" + obj.GetName()
	}
	if err := i.Client.Delete(ctx, obj); err != nil {
		if apierrors.IsNotFound(err) || isNoMatch(err) {
			return nil
		}
		return fmt.Errorf("failed to delete %s: %w", what, err)
	}
	p.notef("deleting %s; waiting for its operator to remove what it deployed", what)
	gone := func(ctx context.Context) (bool, string, error) {
		cur := &unstructured.Unstructured{}
		cur.SetGroupVersionKind(obj.GroupVersionKind())
		err := i.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(obj), cur)
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return false, "", fmt.Errorf("failed to get %s: %w", what, err)
		}
		return false, fmt.Sprintf("%s is held by finalizers %v; is its operator running?", what, cur.GetFinalizers()), nil
	}
	if err := i.Poller.Until(ctx, "removal of "+what, gone, p.noteLine); err != nil {
		return err
	}
	p.notef("%s removed", what)
	return nil
}

// deleteLeftovers deletes operand objects of removed operators that would
// otherwise keep intercepting API requests.
func (i *Installer) deleteLeftovers(ctx context.Context, found []installed, p printer) error {
	for _, r := range found {
		if r.rel == nil {
			continue
		}
		for _, o := range r.Leftovers {
			obj := &unstructured.Unstructured{}
			obj.SetGroupVersionKind(o.GroupVersionKind)
			obj.SetName(o.Name)
			err := i.Client.Delete(ctx, obj)
			switch {
			case err == nil:
				p.notef("deleted leftover %s %s", o.Kind, o.Name)
			case apierrors.IsNotFound(err) || isNoMatch(err):
			default:
				return fmt.Errorf("failed to delete %s %s: %w", o.Kind, o.Name, err)
			}
		}
	}
	return nil
}

// uninstallReleases uninstalls every release, operators included.
func (i *Installer) uninstallReleases(_ context.Context, found []installed, p printer) error {
	for _, r := range found {
		if r.rel == nil {
			p.notef("%s: not installed", r.Name)
			continue
		}
		if err := i.Helm.Uninstall(r.Name, r.Namespace); err != nil {
			return err
		}
		p.notef("%s: uninstalled release %s/%s", r.Name, r.Namespace, r.Name)
	}
	return nil
}

// deleteNamespaces deletes the namespaces the installer created, all at
// once, and waits until they are gone.
func (i *Installer) deleteNamespaces(ctx context.Context, found []installed, p printer) error {
	var deleting []string
	for _, r := range found {
		if !r.ManagedNamespace {
			continue
		}
		started, err := i.deleteNamespace(ctx, r.Component, p)
		if err != nil {
			return err
		}
		if started {
			deleting = append(deleting, r.Namespace)
		}
	}
	for _, ns := range deleting {
		if err := i.waitNamespaceGone(ctx, ns); err != nil {
			return err
		}
		p.notef("namespace %s deleted", ns)
	}
	return nil
}

// deleteCRDs deletes the CRDs of every chart.
func (i *Installer) deleteCRDs(ctx context.Context, found []installed, p printer) error {
	for _, r := range found {
		objs, err := crds.FromChart(r.Chart)
		if err != nil {
			return err
		}
		if err := crds.Delete(ctx, i.Client, crds.Names(objs), i.Poller, p.noteLine); err != nil {
			return err
		}
	}
	return nil
}
