package machinedeployment

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strconv"

	"k8c.io/machine-controller/sdk/apis/cluster/common"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"k8s.io/utils/ptr"
)

// scaleMidRollout handles a change of spec.replicas while more than one
// MachineSet has replicas, as Kubernetes Deployments do: the new total
// (desired plus the surge) is spread over those MachineSets in proportion
// to their size, instead of giving it all to the new MachineSet. When the
// new template is broken, a MachineDeployment scaled up in the middle of
// its rollout (by hand or by the cluster autoscaler) thus still gets
// Machines of the old template that work. It reports whether it scaled;
// the rollout goes on at the next reconcile.
func (r *reconciler) scaleMidRollout(ctx context.Context, md *clusterv1alpha1.MachineDeployment, newSet *clusterv1alpha1.MachineSet,
	olds []*clusterv1alpha1.MachineSet, l limits,
) (bool, error) {
	sets := slices.Clone(olds)
	if newSet != nil {
		sets = append(sets, newSet)
	}
	desired := replicasOf(md)
	sets = slices.DeleteFunc(sets, func(ms *clusterv1alpha1.MachineSet) bool {
		return ms.DeletionTimestamp != nil || ptr.Deref(ms.Spec.Replicas, 1) == 0
	})
	if len(sets) < 2 || !scalingEvent(desired, sets) {
		return false, nil
	}
	states := make([]scaleState, len(sets))
	for i, ms := range sets {
		states[i] = scaleState{replicas: ptr.Deref(ms.Spec.Replicas, 1), maxReplicas: annotatedInt(ms.Annotations, common.MaxReplicasAnnotation)}
	}
	targets := proportionalReplicas(desired, l, states)
	for i, ms := range sets {
		// updateSet also records the new desired replicas on the
		// MachineSets whose size stays, which ends the scaling event.
		if err := r.updateSet(ctx, md, ms, targets[i], revisionOf(ms.Annotations), l); err != nil {
			return true, err
		}
	}
	return true, nil
}

// scalingEvent tells whether the MachineDeployment was scaled since the
// MachineSets with replicas were last sized: one of them records other
// desired replicas.
func scalingEvent(desired int32, sets []*clusterv1alpha1.MachineSet) bool {
	for _, ms := range sets {
		if n := annotatedInt(ms.Annotations, common.DesiredReplicasAnnotation); n >= 0 && n != desired {
			return true
		}
	}
	return false
}

// annotatedInt returns an integer annotation, -1 when absent or invalid.
func annotatedInt(annotations map[string]string, key string) int32 {
	n, err := strconv.ParseInt(annotations[key], 10, 32)
	if err != nil || n < 0 {
		return -1
	}
	return int32(n)
}

// scaleState is what proportional scaling needs to know of a MachineSet.
type scaleState struct {
	// replicas is spec.replicas.
	replicas int32
	// maxReplicas is the desired plus surge the MachineSet was last sized
	// for; -1 when unknown.
	maxReplicas int32
}

// proportionalReplicas returns the replicas of MachineSets (oldest first)
// that together make desired plus the surge: each gets its share of the
// difference in proportion to the total it was sized for, rounded; what
// rounding leaves goes to the largest (on a tie the newest when adding, the
// oldest when removing). Scaling to zero empties them all.
func proportionalReplicas(desired int32, l limits, sets []scaleState) []int32 {
	out := make([]int32, len(sets))
	var total int32
	for i, s := range sets {
		out[i] = s.replicas
		total += s.replicas
	}
	if desired == 0 {
		return make([]int32, len(sets))
	}
	allowed := desired + l.surge
	toAdd := allowed - total
	if toAdd == 0 || len(sets) == 0 {
		return out
	}
	order := make([]int, len(sets))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		byAge := cmp.Compare(b, a) // newer first when adding
		if toAdd < 0 {
			byAge = cmp.Compare(a, b)
		}
		return cmp.Or(cmp.Compare(sets[b].replicas, sets[a].replicas), byAge)
	})
	var added int32
	for _, i := range order {
		share := proportionalShare(sets[i], allowed, total)
		if toAdd > 0 {
			share = max(min(share, toAdd-added), 0)
		} else {
			share = min(max(share, toAdd-added), 0)
		}
		out[i] += share
		added += share
	}
	largest := order[0]
	out[largest] = max(out[largest]+toAdd-added, 0)
	return out
}

// proportionalShare is how many replicas a MachineSet gains (negative:
// loses) when the MachineDeployment's total goes to allowed: its size
// scaled by allowed over the total it was sized for (the current total
// when that is unknown), rounded.
func proportionalShare(s scaleState, allowed, total int32) int32 {
	sizedFor := s.maxReplicas
	if sizedFor <= 0 {
		sizedFor = total
	}
	if sizedFor <= 0 {
		return 0
	}
	return int32(math.Round(float64(s.replicas)*float64(allowed)/float64(sizedFor))) - s.replicas
}
