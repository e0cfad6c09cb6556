package kubevirt

import (
	"context"
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// machineDeploymentOf returns the name of the MachineDeployment that owns a
// Machine through its MachineSet, read from the user cluster, or "" for a
// standalone Machine, one whose MachineSet is gone or has no
// MachineDeployment owner, or when there is no user-cluster client.
func machineDeploymentOf(ctx context.Context, c ctrlruntimeclient.Client, machine *clusterv1alpha1.Machine) (string, error) {
	setName := ownerName(machine.OwnerReferences, "MachineSet")
	if setName == "" || c == nil {
		return "", nil
	}
	set := &clusterv1alpha1.MachineSet{}
	err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: machine.Namespace, Name: setName}, set)
	switch {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("failed to get MachineSet %s/%s: %w", machine.Namespace, setName, err)
	}
	return ownerName(set.OwnerReferences, "MachineDeployment"), nil
}

// ownerName returns the name of the cluster.k8s.io owner of the given kind.
func ownerName(refs []metav1.OwnerReference, kind string) string {
	for _, ref := range refs {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err == nil && gv.Group == clusterv1alpha1.GroupName && ref.Kind == kind {
			return ref.Name
		}
	}
	return ""
}
