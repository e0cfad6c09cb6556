package controller

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt"

	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// staticCapacity is a CapacityProvider that only names its kinds.
type staticCapacity struct{}

func (staticCapacity) TemplateCapacity(context.Context, clusterv1alpha1.MachineSpec) (cloudprovider.NodeCapacity, error) {
	return cloudprovider.NodeCapacity{}, nil
}

func (staticCapacity) CapacityObjects() []ctrlruntimeclient.Object { return kubevirt.CapacityObjects() }

// TestMDWatched: the MachineDeployment controller watches the kinds of
// TemplateRevision and of Capacity, each only when it is set.
func TestMDWatched(t *testing.T) {
	revision := func(context.Context, clusterv1alpha1.MachineSpec) (string, error) { return "", nil }
	kinds := func(opts Options) []string {
		var out []string
		for _, obj := range mdWatched(opts) {
			out = append(out, obj.GetObjectKind().GroupVersionKind().Kind)
		}
		return out
	}
	nad := "NetworkAttachmentDefinition"
	capacity := []string{"VirtualMachineInstancePreset", "VirtualMachineInstancetype", "VirtualMachineClusterInstancetype"}
	for _, tc := range []struct {
		name string
		opts Options
		want []string
	}{
		{name: "neither", opts: Options{RevisionObjects: kubevirt.RevisionObjects()}},
		{name: "revision", opts: Options{TemplateRevision: revision, RevisionObjects: kubevirt.RevisionObjects()}, want: []string{nad}},
		{name: "capacity", opts: Options{Capacity: staticCapacity{}, RevisionObjects: kubevirt.RevisionObjects()}, want: capacity},
		{
			name: "both", opts: Options{TemplateRevision: revision, RevisionObjects: kubevirt.RevisionObjects(), Capacity: staticCapacity{}},
			want: append([]string{nad}, capacity...),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, kinds(tc.opts)); diff != "" {
				t.Errorf("watched kinds (-want +got):\n%s", diff)
			}
		})
	}
}
