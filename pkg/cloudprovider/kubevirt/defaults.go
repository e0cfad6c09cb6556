package kubevirt

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// AnnotationClusterNamespace tells the Node (through MachineSpec) which
// infra namespace its VM runs in.
const AnnotationClusterNamespace = "cluster.x-k8s.io/cluster-namespace"

// AddDefaults implements cloudprovider.Provider. It annotates the
// MachineSpec with the infra namespace and labels it with the region and
// zone its VMs run in: location.region and location.zone when set, else
// the single value the primary storage class's allowedTopologies allow.
// With location.zones the zone is chosen per VM, so no zone label is set.
// A missing storage class sets no label here; Validate reports it.
func (p *Provider) AddDefaults(ctx context.Context, _ *zap.SugaredLogger, spec clusterv1alpha1.MachineSpec) (clusterv1alpha1.MachineSpec, error) {
	t, err := p.prepare(ctx, spec, nil)
	if err != nil {
		return spec, err
	}
	region, zone, err := location(ctx, t)
	if err != nil {
		return spec, err
	}

	out := *spec.DeepCopy()
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[AnnotationClusterNamespace] = t.infra.Namespace
	for key, value := range map[string]string{vm.LabelRegion: region, vm.LabelZone: zone} {
		if value == "" || value == vm.DefaultLocation {
			// Nodes in no region or zone carry no such label either.
			continue
		}
		if out.Labels == nil {
			out.Labels = map[string]string{}
		}
		out.Labels[key] = value
	}
	return out, nil
}

// location returns the region and zone labels of a spec's VMs; see
// AddDefaults.
func location(ctx context.Context, t *target) (region, zone string, err error) {
	s := t.settings
	region, zone = s.Region, s.Zone
	wantZone := zone == "" && len(s.Zones) == 0
	if (region != "" && !wantZone) || s.PrimaryDisk.StorageClassName == "" {
		return region, zone, nil
	}
	sc := &storagev1.StorageClass{}
	err = t.infra.Reader.Get(ctx, ctrlruntimeclient.ObjectKey{Name: s.PrimaryDisk.StorageClassName}, sc)
	switch {
	case apierrors.IsNotFound(err):
		return region, zone, nil
	case err != nil:
		return "", "", fmt.Errorf("failed to get StorageClass %s: %w", s.PrimaryDisk.StorageClassName, err)
	}
	scRegion, scZone := topologyOf(sc)
	if region == "" {
		region = scRegion
	}
	if wantZone {
		zone = scZone
	}
	return region, zone, nil
}
