package config

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// devices resolves template.gpus and template.hostDevices: each needs a
// name (a DNS-1123 label, unique across both lists, as KubeVirt requires)
// and the resource name of its device plugin (such as
// nvidia.com/TU104GL_Tesla_T4).
func (rs *resolution) devices(s *Settings, p *field.Path, t *Template) {
	seen := map[string]string{}
	resolve := func(listPath *field.Path, list []Device) []DeviceSettings {
		var out []DeviceSettings
		for i, d := range list {
			dp := listPath.Index(i)
			namePath := dp.Child("name")
			switch first, dup := seen[d.Name]; {
			case d.Name == "":
				rs.add(field.Required(namePath, "the device's name in the VM"))
			case dup:
				rs.add(field.Invalid(namePath, d.Name, fmt.Sprintf("duplicates %s", first)))
			case rs.dnsLabel(namePath, d.Name):
				seen[d.Name] = dp.String()
			}
			if d.DeviceName == "" {
				rs.add(field.Required(dp.Child("deviceName"), "the resource name the infra device plugin advertises, such as nvidia.com/TU104GL_Tesla_T4"))
			} else {
				rs.labelKey(dp.Child("deviceName"), d.DeviceName)
			}
			out = append(out, DeviceSettings(d))
		}
		return out
	}
	s.GPUs = resolve(p.Child("gpus"), t.GPUs)
	s.HostDevices = resolve(p.Child("hostDevices"), t.HostDevices)
}

// MaxMSIVectors is the MSI vector budget of a VM: each virtio or PCI
// device needs one, and a VM has about 200.
const MaxMSIVectors = 200

// fixedPCIDevices are the PCI devices KubeVirt adds to every VM of ours:
// the memory balloon, the video device, the USB controller and the
// virtio-serial controller of the guest agent channel.
const fixedPCIDevices = 4

// msiVectors refuses a spec whose devices need more MSI vectors than a VM
// has, counting one per device: the root and cloud-init disks, each
// secondary disk, each interface (the pod network's unless a network
// replaces it), each GPU and host device, and the devices KubeVirt adds.
func (rs *resolution) msiVectors(s *Settings) {
	interfaces := len(s.Networks) + 1
	for _, n := range s.Networks {
		if n.Default {
			interfaces--
			break
		}
	}
	disks := 2 + len(s.SecondaryDisks)
	devices := len(s.GPUs) + len(s.HostDevices)
	total := disks + interfaces + devices + fixedPCIDevices
	if total > MaxMSIVectors {
		rs.add(field.Invalid(specPath.Child("virtualMachine"), total, fmt.Sprintf(
			"the VM would need %d MSI vectors (%d disks, %d interfaces, %d GPUs and host devices, %d devices KubeVirt adds), more than the %d a VM has: remove disks, networks or devices",
			total, disks, interfaces, devices, fixedPCIDevices, MaxMSIVectors)))
	}
}
