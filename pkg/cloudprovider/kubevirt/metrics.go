package kubevirt

import (
	"fmt"
	"net/url"
	"strconv"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"k8s.io/apimachinery/pkg/api/resource"
)

// MachineMetricsLabels implements cloudprovider.Provider. It reads the
// providerSpec only (no API call, no Secret): values given by reference are
// reported empty. The labels are cpus (the vcpus cores when set), memoryMIB,
// osImage (without URL credentials), instancetype and flavor.
func (p *Provider) MachineMetricsLabels(machine *clusterv1alpha1.Machine) (map[string]string, error) {
	value := machine.Spec.ProviderSpec.Value
	if value == nil {
		return nil, fmt.Errorf("machine %s has no providerSpec.value", machine.Name)
	}
	spec, err := p.specs.Parse(value.Raw)
	if err != nil {
		return nil, fmt.Errorf("failed to parse the provider spec of machine %s: %w", machine.Name, err)
	}
	v := spec.Raw.VirtualMachine
	labels := map[string]string{
		"cpus":         v.Template.CPUs.Value,
		"memoryMIB":    memoryMiB(v.Template.Memory.Value),
		"osImage":      redactURL(v.Template.PrimaryDisk.OsImage.Value),
		"instancetype": "",
		"flavor":       v.Flavor.Name.Value,
	}
	if v.Template.VCPUs.Cores > 0 {
		labels["cpus"] = strconv.Itoa(v.Template.VCPUs.Cores)
	}
	if v.Instancetype != nil {
		labels["instancetype"] = v.Instancetype.Name
	}
	return labels, nil
}

// memoryMiB renders a memory quantity in MiB, or "" when it does not parse.
func memoryMiB(q string) string {
	quantity, err := resource.ParseQuantity(q)
	if err != nil {
		return ""
	}
	return strconv.FormatInt(quantity.Value()/(1<<20), 10)
}

// redactURL drops user information from a URL; other values pass as they
// are.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = nil
	return u.String()
}
