package kubevirt

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// TemplateRevision returns a short hash of what a Machine template depends
// on in the infra cluster beyond its own spec, "" when it depends on
// nothing: the CNI configuration (spec.config) of every
// NetworkAttachmentDefinition in virtualMachine.networks. A running VM
// keeps the configuration it started with, so when a tenant network's
// configuration changes its VMs must be recreated; the
// MachineDeployment controller rolls a MachineDeployment whose revision
// changed. A missing NetworkAttachmentDefinition counts as a value of its
// own (Machines could not be created; its creation rolls them). The
// objects are read from the API server, not the cache: the watch event
// that leads here may be ahead of the provider's informers.
func (p *Provider) TemplateRevision(ctx context.Context, spec clusterv1alpha1.MachineSpec) (string, error) {
	// The MachineDeployment controller asks on every reconcile: a template
	// without networks is answered from the raw spec, without resolving
	// references (a Secret read each) or reaching the infra cluster.
	if spec.ProviderSpec.Value != nil {
		if parsed, err := p.specs.Parse(spec.ProviderSpec.Value.Raw); err == nil && len(parsed.Raw.VirtualMachine.Networks) == 0 {
			return "", nil
		}
	}
	t, err := p.prepare(ctx, spec, nil)
	if err != nil || len(t.settings.Networks) == 0 {
		return "", err
	}
	h := sha256.New()
	for _, n := range t.settings.Networks {
		key := ctrlruntimeclient.ObjectKey{Namespace: cmp.Or(n.Namespace, t.infra.Namespace), Name: n.Name}
		nad := &unstructured.Unstructured{}
		nad.SetGroupVersionKind(nadGVK)
		config := "\x00missing"
		switch err := t.infra.Writer.Get(ctx, key, nad); {
		case apierrors.IsNotFound(err):
		case err != nil:
			return "", fmt.Errorf("failed to get NetworkAttachmentDefinition %s: %w", key, err)
		default:
			config, _, _ = unstructured.NestedString(nad.Object, "spec", "config")
		}
		_, _ = fmt.Fprintf(h, "%s\x00%d:%s\x00", key, len(config), config)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// RevisionObjects are the kinds TemplateRevision reads, for a watch that
// tells when to ask again: NetworkAttachmentDefinitions, metadata only
// (their generation changes with spec.config).
func RevisionObjects() []ctrlruntimeclient.Object {
	nad := &metav1.PartialObjectMetadata{}
	nad.SetGroupVersionKind(nadGVK)
	return []ctrlruntimeclient.Object{nad}
}
