package preflight

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// minNodes is the smallest node count of Kubermatic's documented minimum
// for the cluster it runs on.
const minNodes = 3

// nodeResource is one allocatable resource the minimum sets per node.
type nodeResource struct {
	name corev1.ResourceName
	// min is the documented minimum per node.
	min resource.Quantity
	// format renders an amount with its unit and what it is.
	format func(resource.Quantity) string
}

// nodeMinimum is Kubermatic's documented minimum per node: 2 CPUs, 4 GB of
// memory and 30 GB of storage. It is compared with what the node's kubelet
// leaves to pods (allocatable), so a node of exactly the minimum size whose
// kubelet reserves a lot falls short.
var nodeMinimum = []nodeResource{
	{corev1.ResourceCPU, resource.MustParse("2"), func(q resource.Quantity) string {
		if q.MilliValue() == 1000 {
			return "1 CPU"
		}
		return strconv.FormatFloat(float64(q.MilliValue())/1000, 'f', -1, 64) + " CPUs"
	}},
	{corev1.ResourceMemory, resource.MustParse("4G"), func(q resource.Quantity) string { return gigabytes(q) + " memory" }},
	{corev1.ResourceEphemeralStorage, resource.MustParse("30G"), func(q resource.Quantity) string { return gigabytes(q) + " ephemeral storage" }},
}

// gigabytes renders a byte amount in decimal gigabytes, the unit of the
// documented minimum, rounded down to two decimals so that an amount below
// the minimum never reads as the minimum.
func gigabytes(q resource.Quantity) string {
	return strconv.FormatFloat(math.Floor(float64(q.Value())/1e7)/100, 'f', -1, 64) + " GB"
}

// minimumText states the documented minimum for messages.
func minimumText() string {
	parts := make([]string, 0, len(nodeMinimum))
	for _, r := range nodeMinimum {
		parts = append(parts, r.format(r.min))
	}
	return fmt.Sprintf("%d nodes with %s allocatable each", minNodes, strings.Join(parts, ", "))
}

// nodeSizes warns when the cluster is below Kubermatic's documented minimum
// in node count or per-node allocatable CPU, memory or ephemeral storage. It
// looks at every node, not only the workload placement: the minimum is for
// the whole cluster. Smaller clusters work for tests, so nothing here blocks.
func nodeSizes(ctx context.Context, cl Cluster, _ Options) ([]Finding, error) {
	const name = "node-size"
	nodes := &corev1.NodeList{}
	if err := cl.Client.List(ctx, nodes); err != nil {
		return nil, fmt.Errorf("failed to list nodes: %w", err)
	}
	if len(nodes.Items) == 0 {
		return []Finding{{name, Warning, "the cluster has no nodes; the documented minimum is " + minimumText()}}, nil
	}
	var out []Finding
	if len(nodes.Items) < minNodes {
		out = append(out, Finding{name, Warning, fmt.Sprintf("the cluster has %s; the documented minimum is %s", plural(len(nodes.Items), "node"), minimumText())})
	}
	var small []string
	for i := range nodes.Items {
		if short := shortfalls(&nodes.Items[i]); len(short) > 0 {
			small = append(small, fmt.Sprintf("%s (%s)", nodes.Items[i].Name, strings.Join(short, ", ")))
		}
	}
	sort.Strings(small)
	if len(small) > 0 {
		out = append(out, Finding{name, Warning, fmt.Sprintf("%d of %d nodes have less allocatable than the documented minimum of %s: %s",
			len(small), len(nodes.Items), minimumText(), list(small))})
	}
	if len(out) == 0 {
		out = append(out, Finding{name, OK, fmt.Sprintf("%d nodes, the smallest allocatable: %s (minimum: %s)", len(nodes.Items), smallest(nodes.Items), minimumText())})
	}
	return out, nil
}

// plural renders a count of things.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// shortfalls lists the node's allocatable resources below the minimum, with
// their amounts.
func shortfalls(node *corev1.Node) []string {
	var out []string
	for _, r := range nodeMinimum {
		q, ok := node.Status.Allocatable[r.name]
		switch {
		case !ok:
			out = append(out, "no allocatable "+string(r.name)+" reported")
		case q.Cmp(r.min) < 0:
			out = append(out, r.format(q))
		}
	}
	return out
}

// smallest renders the smallest allocatable amount of each minimum resource
// among nodes, which must not be empty.
func smallest(nodes []corev1.Node) string {
	parts := make([]string, 0, len(nodeMinimum))
	for _, r := range nodeMinimum {
		least := nodes[0].Status.Allocatable[r.name]
		for i := range nodes[1:] {
			if q := nodes[i+1].Status.Allocatable[r.name]; q.Cmp(least) < 0 {
				least = q
			}
		}
		parts = append(parts, r.format(least))
	}
	return strings.Join(parts, ", ")
}
