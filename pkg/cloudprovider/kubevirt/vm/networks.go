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
// follow as "net1", "net2", … in order. Every interface uses bridge binding.
func buildNetworks(refs []config.NetworkRef) ([]kubevirtcorev1.Network, []kubevirtcorev1.Interface, error) {
	primary := kubevirtcorev1.Network{
		Name:          DefaultNetworkName,
		NetworkSource: kubevirtcorev1.NetworkSource{Pod: &kubevirtcorev1.PodNetwork{}},
	}
	var secondary []kubevirtcorev1.Network
	defaults := 0
	for _, ref := range refs {
		if ref.Name == "" {
			return nil, nil, errors.New("network reference without a name")
		}
		multus := &kubevirtcorev1.MultusNetwork{NetworkName: multusNetworkName(ref), Default: ref.Default}
		if ref.Default {
			defaults++
			primary = kubevirtcorev1.Network{
				Name:          DefaultNetworkName,
				NetworkSource: kubevirtcorev1.NetworkSource{Multus: multus},
			}
			continue
		}
		secondary = append(secondary, kubevirtcorev1.Network{
			Name:          fmt.Sprintf("net%d", len(secondary)+1),
			NetworkSource: kubevirtcorev1.NetworkSource{Multus: multus},
		})
	}
	if defaults > 1 {
		return nil, nil, fmt.Errorf("%d networks are marked default, at most one may be", defaults)
	}

	networks := append([]kubevirtcorev1.Network{primary}, secondary...)
	interfaces := make([]kubevirtcorev1.Interface, 0, len(networks))
	for _, n := range networks {
		interfaces = append(interfaces, kubevirtcorev1.Interface{
			Name:                   n.Name,
			InterfaceBindingMethod: kubevirtcorev1.InterfaceBindingMethod{Bridge: &kubevirtcorev1.InterfaceBridge{}},
		})
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
