package metrics

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// Machine phases of the machines gauge.
const (
	// PhaseProvisioning is a Machine without Node and without error.
	PhaseProvisioning = "Provisioning"
	// PhaseRunning is a Machine with a Node (status.nodeRef).
	PhaseRunning = "Running"
	// PhaseFailed is a Machine with status.errorReason or errorMessage.
	PhaseFailed = "Failed"
	// PhaseDeleting is a Machine being deleted.
	PhaseDeleting = "Deleting"
)

// phases lists the phases in the order they are reported.
var phases = []string{PhaseProvisioning, PhaseRunning, PhaseFailed, PhaseDeleting}

// machineDesc describes the machines gauge.
var machineDesc = prometheus.NewDesc(namespace+"_machines", "Machines by phase (Provisioning, Running, Failed, Deleting).", []string{"phase"}, nil)

// listTimeout bounds the cache read of one scrape.
const listTimeout = 10 * time.Second

// machineCollector counts Machines by phase at scrape time, from a reader
// (the manager's cache).
type machineCollector struct {
	reader ctrlruntimeclient.Reader
}

// RegisterMachines registers the machines gauge, read from reader at every
// scrape, with reg; it replaces the gauge of an earlier registration.
func RegisterMachines(reg prometheus.Registerer, reader ctrlruntimeclient.Reader) error {
	c := &machineCollector{reader: reader}
	reg.Unregister(c)
	if err := reg.Register(c); err != nil {
		return fmt.Errorf("failed to register the machines metric: %w", err)
	}
	return nil
}

// Describe implements prometheus.Collector.
func (c *machineCollector) Describe(ch chan<- *prometheus.Desc) { ch <- machineDesc }

// Collect implements prometheus.Collector. A failed read reports an
// invalid metric, which the scrape shows as an error.
func (c *machineCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	list := &clusterv1alpha1.MachineList{}
	if err := c.reader.List(ctx, list); err != nil {
		ch <- prometheus.NewInvalidMetric(machineDesc, fmt.Errorf("failed to list Machines: %w", err))
		return
	}
	counts := map[string]int{}
	for i := range list.Items {
		counts[Phase(&list.Items[i])]++
	}
	for _, p := range phases {
		ch <- prometheus.MustNewConstMetric(machineDesc, prometheus.GaugeValue, float64(counts[p]), p)
	}
}

// Phase returns the phase of a Machine as the machines gauge counts it.
func Phase(m *clusterv1alpha1.Machine) string {
	switch {
	case m.DeletionTimestamp != nil:
		return PhaseDeleting
	case m.Status.ErrorReason != nil || m.Status.ErrorMessage != nil:
		return PhaseFailed
	case m.Status.NodeRef != nil:
		return PhaseRunning
	default:
		return PhaseProvisioning
	}
}
