package kubevirt

import (
	"context"
	"fmt"

	"go.uber.org/zap"
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// Validate implements cloudprovider.Provider. Beyond the spec itself it
// checks, through the infra cache, that the infra namespace can be read and
// that everything the spec references exists there: the flavor's
// VirtualMachineInstancePreset, the instancetype and preference (with their
// kind), the storage classes, the NetworkAttachmentDefinitions and the
// Secrets of the image import. Every missing thing is listed in one
// TerminalError; failing lookups are transient errors.
func (p *Provider) Validate(ctx context.Context, log *zap.SugaredLogger, spec clusterv1alpha1.MachineSpec) error {
	t, err := p.prepare(ctx, spec, nil)
	if err != nil {
		return err
	}
	logWarnings(log, t.settings)
	// Listing VMIs proves the namespace is reachable with the rights Get
	// needs; served from the cache, it costs nothing once warm.
	var vmis kubevirtcorev1.VirtualMachineInstanceList
	if err := t.infra.Reader.List(ctx, &vmis, ctrlruntimeclient.InNamespace(t.infra.Namespace)); err != nil {
		return fmt.Errorf("failed to list VirtualMachineInstances in infra namespace %s: %w", t.infra.Namespace, err)
	}
	_, missing, err := inspect(ctx, t, nil)
	if err != nil {
		return err
	}
	return missing.terminal()
}
