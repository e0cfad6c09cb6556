package machineset

import (
	"cmp"
	"slices"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
)

// AnnotationDeleteMachine marks a Machine to delete first when its
// MachineSet scales down.
const AnnotationDeleteMachine = "cluster.k8s.io/delete-machine"

// Deletion priorities: lower goes first.
const (
	priorityMust   = iota // annotated for deletion, or already being deleted
	priorityBetter        // failed: errorReason or errorMessage set
	prioritySooner        // has no Node yet
	priorityCould
)

// deletePriority ranks a Machine for deletion.
func deletePriority(m *clusterv1alpha1.Machine) int {
	switch {
	case m.DeletionTimestamp != nil || m.Annotations[AnnotationDeleteMachine] != "":
		return priorityMust
	case m.Status.ErrorReason != nil || m.Status.ErrorMessage != nil:
		return priorityBetter
	case m.Status.NodeRef == nil:
		return prioritySooner
	default:
		return priorityCould
	}
}

// machinesToDelete returns n of the machines to delete under policy
// (Random when empty or unknown). Annotated, failed and Node-less Machines
// go first under every policy. Among equals, Newest deletes the most
// recently created, Oldest the least recently created, and Random orders
// by UID, which is random and stable across reconciles, so repeated calls
// pick the same Machines.
func machinesToDelete(machines []*clusterv1alpha1.Machine, n int, policy clusterv1alpha1.MachineSetDeletePolicy) []*clusterv1alpha1.Machine {
	if n <= 0 {
		return nil
	}
	sorted := slices.Clone(machines)
	slices.SortStableFunc(sorted, func(a, b *clusterv1alpha1.Machine) int {
		if c := cmp.Compare(deletePriority(a), deletePriority(b)); c != 0 {
			return c
		}
		var c int
		switch policy {
		case clusterv1alpha1.NewestMachineSetDeletePolicy:
			c = b.CreationTimestamp.Compare(a.CreationTimestamp.Time)
		case clusterv1alpha1.OldestMachineSetDeletePolicy:
			c = a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
		}
		if c != 0 {
			return c
		}
		return cmp.Compare(a.UID, b.UID)
	})
	return sorted[:min(n, len(sorted))]
}
