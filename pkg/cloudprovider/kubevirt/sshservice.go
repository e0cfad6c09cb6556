package kubevirt

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// ensureSSHService creates the SSH Service of a VM, or brings an existing
// one's type, selector, ports, external traffic policy, source ranges,
// labels and annotations up to date: one left by an earlier VM of the same
// name may expose another port.
// The node port the API server allocated is kept. It patches, so the
// provider needs no update permission on Services.
func ensureSSHService(ctx context.Context, c *infra.Client, desired *corev1.Service) (*corev1.Service, error) {
	current, err := getOrCreate(ctx, c, desired)
	if err != nil {
		return nil, err
	}
	if sshServiceUpToDate(current, desired) {
		return current, nil
	}
	patch := ctrlruntimeclient.MergeFrom(current.DeepCopy())
	current.Spec.Type = desired.Spec.Type
	current.Spec.Selector = desired.Spec.Selector
	current.Spec.Ports = withNodePorts(desired.Spec.Ports, current.Spec.Ports)
	current.Spec.ExternalTrafficPolicy = desired.Spec.ExternalTrafficPolicy
	current.Spec.LoadBalancerSourceRanges = desired.Spec.LoadBalancerSourceRanges
	current.Labels = mergedMap(current.Labels, desired.Labels)
	current.Annotations = mergedMap(current.Annotations, desired.Annotations)
	if err := c.Writer.Patch(ctx, current, patch); err != nil {
		return nil, fmt.Errorf("failed to update Service %s: %w", ctrlruntimeclient.ObjectKeyFromObject(current), err)
	}
	return current, nil
}

// sshServiceUpToDate reports whether current has the desired spec fields,
// labels and annotations (other labels and annotations may be present).
func sshServiceUpToDate(current, desired *corev1.Service) bool {
	return current.Spec.Type == desired.Spec.Type &&
		maps.Equal(current.Spec.Selector, desired.Spec.Selector) &&
		apiequality.Semantic.DeepEqual(withNodePorts(desired.Spec.Ports, current.Spec.Ports), current.Spec.Ports) &&
		current.Spec.ExternalTrafficPolicy == desired.Spec.ExternalTrafficPolicy &&
		slices.Equal(current.Spec.LoadBalancerSourceRanges, desired.Spec.LoadBalancerSourceRanges) &&
		containsAll(current.Labels, desired.Labels) &&
		containsAll(current.Annotations, desired.Annotations)
}

// withNodePorts returns the desired ports with the node ports the API
// server allocated to current ports of the same name.
func withNodePorts(desired, current []corev1.ServicePort) []corev1.ServicePort {
	out := slices.Clone(desired)
	for i := range out {
		for _, cur := range current {
			if cur.Name == out[i].Name {
				out[i].NodePort = cur.NodePort
			}
		}
	}
	return out
}

// containsAll reports whether every entry of want is in have.
func containsAll(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// mergedMap returns current with the entries of desired set.
func mergedMap(current, desired map[string]string) map[string]string {
	if len(desired) == 0 {
		return current
	}
	if current == nil {
		current = make(map[string]string, len(desired))
	}
	maps.Copy(current, desired)
	return current
}
