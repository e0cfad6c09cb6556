package machinedeployment

import (
	"fmt"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// limits are the resolved bounds of a rolling update.
type limits struct {
	// surge is how many Machines may exist above the desired replicas.
	surge int32
	// unavailable is how many of the desired replicas may be unavailable.
	unavailable int32
}

// resolveLimits resolves maxSurge and maxUnavailable against replicas as
// Kubernetes Deployments do: a percentage of maxSurge rounds up, one of
// maxUnavailable rounds down, and when both come to zero one Machine may
// be unavailable, so the rollout can move at all. Absent values take the
// SDK defaults: maxSurge 1, maxUnavailable 0.
func resolveLimits(surge, unavailable *intstr.IntOrString, replicas int32) (limits, error) {
	s, err := scaled(ptr.Deref(surge, intstr.FromInt32(1)), replicas, true)
	if err != nil {
		return limits{}, fmt.Errorf("invalid maxSurge: %w", err)
	}
	u, err := scaled(ptr.Deref(unavailable, intstr.FromInt32(0)), replicas, false)
	if err != nil {
		return limits{}, fmt.Errorf("invalid maxUnavailable: %w", err)
	}
	if s == 0 && u == 0 {
		u = 1
	}
	return limits{surge: s, unavailable: min(u, replicas)}, nil
}

// scaled resolves an int or percent against total, rounding a percentage
// up or down. Negative values are errors.
func scaled(v intstr.IntOrString, total int32, roundUp bool) (int32, error) {
	n, err := intstr.GetScaledValueFromIntOrPercent(&v, int(total), roundUp)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, fmt.Errorf("%s is negative", v.String())
	}
	return int32(n), nil
}

// limitsOf resolves the rolling update limits of a MachineDeployment.
func limitsOf(md *clusterv1alpha1.MachineDeployment) (limits, error) {
	var ru clusterv1alpha1.MachineRollingUpdateDeployment
	if md.Spec.Strategy != nil && md.Spec.Strategy.RollingUpdate != nil {
		ru = *md.Spec.Strategy.RollingUpdate
	}
	return resolveLimits(ru.MaxSurge, ru.MaxUnavailable, replicasOf(md))
}

// replicasOf returns the desired replicas of a MachineDeployment (1 when
// unset).
func replicasOf(md *clusterv1alpha1.MachineDeployment) int32 {
	return ptr.Deref(md.Spec.Replicas, 1)
}

// newSetReplicas returns the replicas the new MachineSet should have now:
// scaled up as far as the surge allows (never above desired) or down to
// desired. total is the spec.replicas of every MachineSet, current those
// of the new one.
func newSetReplicas(desired, total, current int32, l limits) int32 {
	if current >= desired {
		return desired
	}
	room := desired + l.surge - total
	if room <= 0 {
		return current
	}
	return current + min(room, desired-current)
}

// setState is what the rollout math needs to know of one MachineSet.
type setState struct {
	// replicas is spec.replicas.
	replicas int32
	// available is status.availableReplicas, at most replicas.
	available int32
}

// unavailable is how many of a MachineSet's replicas are not available.
func (s setState) unavailable() int32 {
	return max(s.replicas-s.available, 0)
}

// oldSetReplicas returns the new spec.replicas of the old MachineSets
// (ordered oldest first) so that at least desired-unavailable Machines
// stay available: it first takes replicas that are unavailable anyway,
// oldest MachineSet first, then available ones as far as the availability
// floor allows.
func oldSetReplicas(desired int32, l limits, newSet setState, olds []setState) []int32 {
	out := make([]int32, len(olds))
	total, available := newSet.replicas, newSet.available
	for i, s := range olds {
		out[i] = s.replicas
		total += s.replicas
		available += s.available
	}
	minAvailable := desired - l.unavailable
	// Budget for the unavailable replicas of old MachineSets: what is left
	// once the new MachineSet's unavailable replicas count against it.
	budget := total - minAvailable - newSet.unavailable()
	if budget <= 0 {
		return out
	}
	for i, s := range olds {
		n := min(s.unavailable(), budget)
		out[i] -= n
		budget -= n
	}
	// Then available replicas, keeping minAvailable available.
	spare := available - minAvailable
	for i := range olds {
		if spare <= 0 {
			break
		}
		n := min(out[i], spare)
		out[i] -= n
		spare -= n
	}
	return out
}
