package metrics

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// machineInfoName is the name of the per-Machine info metric.
const machineInfoName = namespace + "_machine_info"

// machineInfoHelp is its help text.
const machineInfoHelp = "One series per Machine, value 1: its namespace, name, phase, kubelet version and the provider's labels of its providerSpec."

// ownLabels are the labels of the info metric that are not the provider's;
// a provider label of the same name is left out.
var ownLabels = []string{"namespace", "machine", "phase", "kubelet_version"}

// labelName matches a valid Prometheus label name.
var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// LabelsFunc returns the provider's metric labels of a Machine
// (cloudprovider.Provider.MachineMetricsLabels).
type LabelsFunc func(*clusterv1alpha1.Machine) (map[string]string, error)

// infoCollector reports the machine info metric at scrape time from a
// reader (the manager's cache). Its label names depend on the provider, so
// it describes no metric (an unchecked collector) and cannot be
// unregistered: a registry holds one, whose source a later registration
// replaces.
type infoCollector struct {
	mu     sync.Mutex
	reader ctrlruntimeclient.Reader
	labels LabelsFunc
}

var (
	infoMu         sync.Mutex
	infoCollectors = map[prometheus.Registerer]*infoCollector{}
)

// RegisterMachineInfo registers the machine info metric, read from reader
// and labelled by labels at every scrape, with reg; it replaces the source
// of an earlier registration with the same registry.
func RegisterMachineInfo(reg prometheus.Registerer, reader ctrlruntimeclient.Reader, labels LabelsFunc) error {
	infoMu.Lock()
	defer infoMu.Unlock()
	if c, ok := infoCollectors[reg]; ok {
		c.mu.Lock()
		c.reader, c.labels = reader, labels
		c.mu.Unlock()
		return nil
	}
	c := &infoCollector{reader: reader, labels: labels}
	if err := reg.Register(c); err != nil {
		return fmt.Errorf("failed to register the machine info metric: %w", err)
	}
	infoCollectors[reg] = c
	return nil
}

// Describe implements prometheus.Collector: nothing, see infoCollector.
func (c *infoCollector) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector. Every series of a scrape has the
// same label names: the own ones and every provider label any Machine has
// (empty where a Machine has not). A Machine whose provider labels cannot
// be computed (a providerSpec that does not parse) has them empty. A failed
// read reports an invalid metric, which the scrape shows as an error.
func (c *infoCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	reader, labels := c.reader, c.labels
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	list := &clusterv1alpha1.MachineList{}
	if err := reader.List(ctx, list); err != nil {
		desc := prometheus.NewDesc(machineInfoName, machineInfoHelp, nil, nil)
		ch <- prometheus.NewInvalidMetric(desc, fmt.Errorf("failed to list Machines: %w", err))
		return
	}
	perMachine := make([]map[string]string, len(list.Items))
	keys := map[string]bool{}
	for i := range list.Items {
		perMachine[i] = providerLabels(&list.Items[i], labels)
		for k := range perMachine[i] {
			keys[k] = true
		}
	}
	names := append(slices.Clone(ownLabels), slices.Sorted(maps.Keys(keys))...)
	desc := prometheus.NewDesc(machineInfoName, machineInfoHelp, names, nil)
	for i := range list.Items {
		m := &list.Items[i]
		kubelet := m.Spec.Versions.Kubelet
		values := []string{m.Namespace, m.Name, Phase(m), kubelet}
		for _, k := range names[len(ownLabels):] {
			values = append(values, perMachine[i][k])
		}
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, 1, values...)
	}
}

// providerLabels returns the provider's labels of m that can be Prometheus
// labels and do not clash with the own ones; none when they cannot be
// computed.
func providerLabels(m *clusterv1alpha1.Machine, labels LabelsFunc) map[string]string {
	out := map[string]string{}
	if labels == nil {
		return out
	}
	got, err := labels(m)
	if err != nil {
		return out
	}
	for k, v := range got {
		if labelName.MatchString(k) && !slices.Contains(ownLabels, k) {
			out[k] = v
		}
	}
	return out
}
