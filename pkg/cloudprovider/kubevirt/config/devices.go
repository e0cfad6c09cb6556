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
