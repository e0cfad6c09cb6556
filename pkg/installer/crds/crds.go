package crds

import (
	"context"
	"fmt"
	"slices"

	"helm.sh/helm/v3/pkg/chart"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/readiness"
)

var crdGVK = apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")

// FromChart decodes the CRDs in the chart's crds/ directory.
func FromChart(ch *chart.Chart) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, f := range ch.CRDObjects() {
		for _, doc := range readiness.Documents(string(f.File.Data)) {
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
				return nil, fmt.Errorf("failed to parse %s of chart %s: %w", f.Filename, ch.Name(), err)
			}
			if len(obj.Object) == 0 {
				continue
			}
			if obj.GroupVersionKind() != crdGVK {
				return nil, fmt.Errorf("%s of chart %s holds a %s, not a CRD", f.Filename, ch.Name(), obj.GroupVersionKind())
			}
			out = append(out, obj)
		}
	}
	return out, nil
}

// Names returns the names of crds.
func Names(crds []*unstructured.Unstructured) []string {
	names := make([]string, 0, len(crds))
	for _, crd := range crds {
		names = append(names, crd.GetName())
	}
	return names
}

// Apply creates or updates the CRDs with server-side apply, labelled as owned
// by the installer for component. Applying unchanged CRDs writes nothing.
func Apply(ctx context.Context, c ctrlruntimeclient.Client, component string, crds []*unstructured.Unstructured) error {
	for _, crd := range crds {
		obj := crd.DeepCopy()
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		for k, v := range components.OwnedLabels(component) {
			labels[k] = v
		}
		obj.SetLabels(labels)
		err := c.Apply(ctx, ctrlruntimeclient.ApplyConfigurationFromUnstructured(obj),
			ctrlruntimeclient.FieldOwner(components.FieldManager), ctrlruntimeclient.ForceOwnership)
		if err != nil {
			return fmt.Errorf("failed to apply CRD %s: %w", obj.GetName(), err)
		}
	}
	return nil
}

// WaitEstablished waits until the API server serves every named CRD: it is
// Established and discovery lists its kind in every served version, which
// the API server updates after Established. Helm maps a release's objects
// through discovery, so a kind missing there fails the release.
func WaitEstablished(ctx context.Context, c ctrlruntimeclient.Client, dc discovery.DiscoveryInterface, names []string, p readiness.Poller) error {
	for _, name := range names {
		cond := func(ctx context.Context) (bool, string, error) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Name: name}, crd); err != nil {
				return false, "", fmt.Errorf("failed to get CRD %s: %w", name, err)
			}
			if !established(crd) {
				return false, "not established", nil
			}
			return discovered(dc, crd)
		}
		if err := p.Until(ctx, "CRD "+name, cond, nil); err != nil {
			return err
		}
	}
	return nil
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, cond := range crd.Status.Conditions {
		if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// discovered reports whether discovery lists the CRD's resource in every
// served version. It asks the API server each time: a cached mapper would
// keep a group version it read before the kind appeared.
func discovered(dc discovery.DiscoveryInterface, crd *apiextensionsv1.CustomResourceDefinition) (bool, string, error) {
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}.String()
		list, err := dc.ServerResourcesForGroupVersion(gv)
		if err != nil && !apierrors.IsNotFound(err) {
			return false, "", fmt.Errorf("failed to discover %s: %w", gv, err)
		}
		if list == nil || !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == crd.Spec.Names.Plural }) {
			return false, fmt.Sprintf("%s %s not yet in discovery", crd.Spec.Names.Kind, gv), nil
		}
	}
	return true, "", nil
}

// Delete deletes the named CRDs that the installer owns and waits until they
// are gone; CRDs the installer did not create are left alone and reported.
func Delete(ctx context.Context, c ctrlruntimeclient.Client, names []string, p readiness.Poller, report func(string)) error {
	for _, name := range names {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Name: name}, crd); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("failed to get CRD %s: %w", name, err)
		}
		if crd.Labels[components.LabelManagedBy] != components.ManagedBy {
			report(fmt.Sprintf("CRD %s was not created by kubevirt-installer, leaving it", name))
			continue
		}
		if err := c.Delete(ctx, crd, ctrlruntimeclient.Preconditions{UID: &crd.UID}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("failed to delete CRD %s: %w", name, err)
		}
		report("deleted CRD " + name)
		gone := func(ctx context.Context) (bool, string, error) {
			err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Name: name}, &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{
				APIVersion: crdGVK.GroupVersion().String(), Kind: crdGVK.Kind,
			}})
			if apierrors.IsNotFound(err) {
				return true, "", nil
			}
			if err != nil {
				return false, "", fmt.Errorf("failed to get CRD %s: %w", name, err)
			}
			return false, "still terminating", nil
		}
		if err := p.Until(ctx, "deletion of CRD "+name, gone, nil); err != nil {
			return err
		}
	}
	return nil
}
