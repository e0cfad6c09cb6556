package kubevirt

import (
	"cmp"
	"slices"
	"strings"

	kubevirtcorev1 "kubevirt.io/api/core/v1"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// gpuVendors are the vendor domains of device plugin resource names whose
// passthrough host devices count as GPUs. A device of virtualMachine's
// gpus counts whatever its vendor.
var gpuVendors = []string{"amd.com", "nvidia.com"}

// guestShape is what sizes a KubeVirt guest, as the VM template, a
// flavor's VirtualMachineInstancePreset or an instancetype state it.
type guestShape struct {
	// cores, sockets and threads are the vCPU topology; when all are 0,
	// KubeVirt derives the vCPUs from cpu.
	cores, sockets, threads uint32
	// cpu is the CPU limit of the virt-launcher pod, nil when unset.
	cpu *resource.Quantity
	// memory is the memory the guest sees, nil when unset.
	memory *resource.Quantity
	// gpus and hostDevices are the device plugin resource names
	// (deviceName) of the passthrough devices.
	gpus, hostDevices []string
}

// hasTopology tells whether the shape sets a vCPU topology.
func (g guestShape) hasTopology() bool {
	return g.cores != 0 || g.sockets != 0 || g.threads != 0
}

// templateShape returns the shape the VM template gives, as vm.Build
// builds it: vcpus.cores or the CPU tuning's topology, the cpus quantity
// (request and limit), the tuning's guest memory or else the memory
// request. An instancetype sizes the guest itself: then only the devices
// come from the template.
func templateShape(s *config.Settings) guestShape {
	var out guestShape
	for _, d := range s.GPUs {
		out.gpus = append(out.gpus, d.DeviceName)
	}
	for _, d := range s.HostDevices {
		out.hostDevices = append(out.hostDevices, d.DeviceName)
	}
	if s.Instancetype != nil {
		return out
	}
	out.cores = uint32(max(s.VCPUCores, 0)) // Config validation bounds the cores.
	if t := s.Tuning.CPU; t != nil {
		out.cores = cmp.Or(t.Cores, out.cores)
		out.sockets, out.threads = t.Sockets, t.Threads
	}
	out.cpu = copyQuantity(s.CPUs)
	out.memory = copyQuantity(cmp.Or(s.Tuning.GuestMemory, s.Memory))
	return out
}

// presetShape returns the shape a VirtualMachineInstancePreset's domain
// gives: its CPU topology, its CPU limit (else request), its guest memory
// (else memory request, else limit) and its devices.
func presetShape(d *kubevirtcorev1.DomainSpec) guestShape {
	var out guestShape
	if d == nil {
		return out
	}
	if c := d.CPU; c != nil {
		out.cores, out.sockets, out.threads = c.Cores, c.Sockets, c.Threads
	}
	out.cpu = firstQuantity(corev1.ResourceCPU, d.Resources.Limits, d.Resources.Requests)
	if d.Memory != nil && d.Memory.Guest != nil {
		out.memory = copyQuantity(d.Memory.Guest)
	} else {
		out.memory = firstQuantity(corev1.ResourceMemory, d.Resources.Requests, d.Resources.Limits)
	}
	for _, g := range d.Devices.GPUs {
		out.gpus = append(out.gpus, g.DeviceName)
	}
	for _, h := range d.Devices.HostDevices {
		out.hostDevices = append(out.hostDevices, h.DeviceName)
	}
	return out
}

// instancetypeShape returns the shape an instancetype gives. Its guest
// vCPUs are counted as sockets, KubeVirt's default when no preference
// spreads them otherwise; only their number matters here.
func instancetypeShape(spec *instancetypev1beta1.VirtualMachineInstancetypeSpec) guestShape {
	out := guestShape{sockets: spec.CPU.Guest, memory: copyQuantity(&spec.Memory.Guest)}
	for _, g := range spec.GPUs {
		out.gpus = append(out.gpus, g.DeviceName)
	}
	for _, h := range spec.HostDevices {
		out.hostDevices = append(out.hostDevices, h.DeviceName)
	}
	return out
}

// withPreset fills what the template leaves unset from a flavor's preset:
// the template's topology, CPU and memory win, and the preset's devices
// are added to the template's.
func withPreset(template, preset guestShape) guestShape {
	out := template
	if !out.hasTopology() {
		out.cores, out.sockets, out.threads = preset.cores, preset.sockets, preset.threads
	}
	out.cpu = cmp.Or(out.cpu, preset.cpu)
	out.memory = cmp.Or(out.memory, preset.memory)
	out.gpus = append(slices.Clone(out.gpus), preset.gpus...)
	out.hostDevices = append(slices.Clone(out.hostDevices), preset.hostDevices...)
	return out
}

// withInstancetype sizes the guest by an instancetype: its vCPUs and
// memory replace the others, and its devices are added.
func withInstancetype(base, it guestShape) guestShape {
	out := it
	out.gpus = append(slices.Clone(base.gpus), it.gpus...)
	out.hostDevices = append(slices.Clone(base.hostDevices), it.hostDevices...)
	return out
}

// vcpus returns the number of vCPUs of the guest, 0 when the shape does
// not tell: the product of the topology (a part left 0 counts as 1), or
// else the CPU limit rounded up, as KubeVirt derives it.
func (g guestShape) vcpus() int64 {
	if g.hasTopology() {
		one := func(v uint32) int64 { return int64(max(v, 1)) }
		return one(g.cores) * one(g.sockets) * one(g.threads)
	}
	if g.cpu == nil {
		return 0
	}
	return max(g.cpu.Value(), 0)
}

// nodeCapacity returns what a Node of settings will have, with the guest
// sized by shape: its vCPUs, the guest memory, the primary disk (the root
// file system) as ephemeral storage, its GPUs and the topology labels of
// an explicit location.
func nodeCapacity(s *config.Settings, shape guestShape) cloudprovider.NodeCapacity {
	var out cloudprovider.NodeCapacity
	if n := shape.vcpus(); n > 0 {
		out.CPU = resource.NewQuantity(n, resource.DecimalSI)
	}
	if shape.memory != nil && shape.memory.Sign() > 0 {
		out.Memory = copyQuantity(shape.memory)
	}
	if s.PrimaryDisk.Size.Sign() > 0 {
		out.EphemeralStorage = copyQuantity(&s.PrimaryDisk.Size)
	}
	out.GPUType, out.GPUCount = gpuCapacity(shape.gpus, shape.hostDevices)
	out.Labels = locationLabels(s)
	return out
}

// gpuCapacity returns the extended resource a Node advertises its GPUs as
// and their number. Inside the guest the vendor's device plugin advertises
// every GPU as <vendor domain>/gpu, whatever the model its infra resource
// name (for example nvidia.com/TU104GL_Tesla_T4) names. gpus count
// whatever their vendor, host devices only for gpuVendors. The autoscaler
// knows one GPU type per node group: with several vendors the one with the
// most devices is reported (the first by name on a tie).
func gpuCapacity(gpus, hostDevices []string) (string, int64) {
	counts := map[string]int64{}
	for _, name := range gpus {
		if vendor := vendorOf(name); vendor != "" {
			counts[vendor]++
		}
	}
	for _, name := range hostDevices {
		if vendor := vendorOf(name); slices.Contains(gpuVendors, vendor) {
			counts[vendor]++
		}
	}
	best := ""
	for vendor, n := range counts {
		if best == "" || n > counts[best] || (n == counts[best] && vendor < best) {
			best = vendor
		}
	}
	if best == "" {
		return "", 0
	}
	return best + "/gpu", counts[best]
}

// vendorOf returns the domain of a device plugin resource name, "" when it
// has none.
func vendorOf(resourceName string) string {
	vendor, _, found := strings.Cut(resourceName, "/")
	if !found {
		return ""
	}
	return vendor
}

// locationLabels returns the topology labels every Node of settings gets
// from an explicit location: the region, and the zone unless the VMs are
// spread over several zones. A location derived from the storage class
// needs the infra cluster and is left out.
func locationLabels(s *config.Settings) map[string]string {
	zone := s.Zone
	switch len(s.Zones) {
	case 0:
	case 1:
		zone = s.Zones[0]
	default:
		zone = ""
	}
	out := map[string]string{}
	if s.Region != "" {
		out[vm.LabelRegion] = s.Region
	}
	if zone != "" {
		out[vm.LabelZone] = zone
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// firstQuantity returns a copy of the first of lists that holds name, or
// nil.
func firstQuantity(name corev1.ResourceName, lists ...corev1.ResourceList) *resource.Quantity {
	for _, l := range lists {
		if q, ok := l[name]; ok {
			return &q
		}
	}
	return nil
}

// copyQuantity returns a copy of q, or nil.
func copyQuantity(q *resource.Quantity) *resource.Quantity {
	if q == nil {
		return nil
	}
	c := q.DeepCopy()
	return &c
}
