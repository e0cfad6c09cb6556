package preflight

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// sized is a node with the given allocatable CPU, memory and ephemeral
// storage; an empty amount leaves the resource unreported.
func sized(name, cpu, memory, storage string) *corev1.Node {
	n := node(name, nil, false)
	n.Status.Allocatable = corev1.ResourceList{}
	for r, amount := range map[corev1.ResourceName]string{
		corev1.ResourceCPU: cpu, corev1.ResourceMemory: memory, corev1.ResourceEphemeralStorage: storage,
	} {
		if amount != "" {
			n.Status.Allocatable[r] = resource.MustParse(amount)
		}
	}
	return n
}

func TestNodeSizes(t *testing.T) {
	const minimum = "3 nodes with 2 CPUs, 4 GB memory, 30 GB ephemeral storage allocatable each"
	tests := []struct {
		name  string
		nodes []ctrlruntimeclient.Object
		want  []Finding
	}{
		{
			name: "no nodes",
			want: []Finding{{"node-size", Warning, "the cluster has no nodes; the documented minimum is " + minimum}},
		},
		{
			name:  "at the minimum",
			nodes: []ctrlruntimeclient.Object{sized("a", "2", "4G", "30G"), sized("b", "8", "4G", "100Gi"), sized("c", "2500m", "16Gi", "30G")},
			want:  []Finding{{"node-size", OK, "3 nodes, the smallest allocatable: 2 CPUs, 4 GB memory, 30 GB ephemeral storage (minimum: " + minimum + ")"}},
		},
		{
			name:  "too few nodes",
			nodes: []ctrlruntimeclient.Object{sized("a", "4", "8Gi", "50Gi")},
			want:  []Finding{{"node-size", Warning, "the cluster has 1 node; the documented minimum is " + minimum}},
		},
		{
			name: "too small nodes",
			nodes: []ctrlruntimeclient.Object{
				sized("c", "1", "3800Mi", "50Gi"), sized("a", "1900m", "8Gi", "29G"), sized("b", "4", "8Gi", "50Gi"), sized("d", "4", "8Gi", ""),
			},
			want: []Finding{{"node-size", Warning, "3 of 4 nodes have less allocatable than the documented minimum of " + minimum +
				": a (1.9 CPUs, 29 GB ephemeral storage), c (1 CPU, 3.98 GB memory), d (no allocatable ephemeral-storage reported)"}},
		},
		{
			name:  "too few and too small",
			nodes: []ctrlruntimeclient.Object{sized("a", "2", "2Gi", "30G"), sized("b", "2", "4G", "30G")},
			want: []Finding{
				{"node-size", Warning, "the cluster has 2 nodes; the documented minimum is " + minimum},
				{"node-size", Warning, "1 of 2 nodes have less allocatable than the documented minimum of " + minimum + ": a (2.14 GB memory)"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			findings, err := nodeSizes(t.Context(), Cluster{Client: fakeClient(t, tt.nodes...)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, findings); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if HasErrors(findings) {
				t.Error("node sizes must only warn")
			}
		})
	}
}
