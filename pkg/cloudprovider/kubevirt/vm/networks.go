package vm

import (
	"errors"
	"fmt"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"
)

// buildNetworks returns the networks of the VM template and their
// interfaces. The primary network, named "default", is the pod network
// unless a Multus network is marked default; the other Multus networks
// follow as "net1", "net2", … in order. Interfaces use bridge binding, or
// SR-IOV where a network asks for it.
func buildNetworks(refs []config.NetworkRef) ([]kubevirtcorev1.Network, []kubevirtcorev1.Interface, error) {
	primary := kubevirtcorev1.Network{
		Name:          DefaultNetworkName,
		NetworkSource: kubevirtcorev1.NetworkSource{Pod: &kubevirtcorev1.PodNetwork{}},
	}
	var secondary []kubevirtcorev1.Network
	sriov := map[string]bool{}
	defaults := 0
	for _, ref := range refs {
		if ref.Name == "" {
			return nil, nil, errors.New("network reference without a name")
		}
		multus := &kubevirtcorev1.MultusNetwork{NetworkName: multusNetworkName(ref), Default: ref.Default}
		name := fmt.Sprintf("net%d", len(secondary)+1)
		if ref.Default {
			defaults++
			name = DefaultNetworkName
		}
		sriov[name] = ref.Binding == config.BindingSRIOV
		network := kubevirtcorev1.Network{Name: name, NetworkSource: kubevirtcorev1.NetworkSource{Multus: multus}}
		if ref.Default {
			primary = network
			continue
		}
		secondary = append(secondary, network)
	}
	if defaults > 1 {
		return nil, nil, fmt.Errorf("%d networks are marked default, at most one may be", defaults)
	}

	networks := append([]kubevirtcorev1.Network{primary}, secondary...)
	interfaces := make([]kubevirtcorev1.Interface, 0, len(networks))
	for _, n := range networks {
		binding := kubevirtcorev1.InterfaceBindingMethod{Bridge: &kubevirtcorev1.InterfaceBridge{}}
		if sriov[n.Name] {
			binding = kubevirtcorev1.InterfaceBindingMethod{SRIOV: &kubevirtcorev1.InterfaceSRIOV{}}
		}
		interfaces = append(interfaces, kubevirtcorev1.Interface{Name: n.Name, InterfaceBindingMethod: binding})
	}
	return networks, interfaces, nil
}

// multusNetworkName returns the NetworkAttachmentDefinition reference of a
// network: "<namespace>/<name>", or "<name>" for the VM's namespace.
func multusNetworkName(ref config.NetworkRef) string {
	if ref.Namespace == "" {
		return ref.Name
	}
	return ref.Namespace + "/" + ref.Name
}
