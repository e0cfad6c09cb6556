package config

import (
	"fmt"
	"slices"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	hugepageSizes = []string{"2Mi", "1Gi"}
	diskBuses     = []kubevirtcorev1.DiskBus{
		kubevirtcorev1.DiskBusVirtio, kubevirtcorev1.DiskBusSATA, kubevirtcorev1.DiskBusSCSI, kubevirtcorev1.DiskBusUSB,
	}
	diskCaches = []kubevirtcorev1.DriverCache{
		kubevirtcorev1.CacheNone, kubevirtcorev1.CacheWriteThrough, kubevirtcorev1.CacheWriteBack,
	}
	// ioThreadsPolicies leaves out supplementalPool, which needs a thread
	// count the spec has no field for.
	ioThreadsPolicies = []kubevirtcorev1.IOThreadsPolicy{kubevirtcorev1.IOThreadsPolicyShared, kubevirtcorev1.IOThreadsPolicyAuto}
)

// tuning resolves virtualMachine.tuning. It runs after the resources and
// disks, whose results it checks against.
func (rs *resolution) tuning(s *Settings, p *field.Path, t *Tuning) {
	if t == nil {
		return
	}
	rs.cpuTuning(s, p.Child("cpu"), t.CPU)
	rs.memoryTuning(s, p.Child("memory"), t.Memory)
	s.Tuning.OvercommitGuestOverhead = t.OvercommitGuestOverhead
	rs.deviceTuning(s, p.Child("devices"), t.Devices)
	if policy := kubevirtcorev1.IOThreadsPolicy(t.IOThreadsPolicy); policy != "" && enum(rs, p.Child("ioThreadsPolicy"), policy, ioThreadsPolicies) {
		s.Tuning.IOThreadsPolicy = policy
	}
}

func (rs *resolution) cpuTuning(s *Settings, p *field.Path, c *CPUTuning) {
	if c == nil {
		return
	}
	out := *c
	out.Features = slices.Clone(c.Features)
	s.Tuning.CPU = &out
	if c.Cores != 0 && s.VCPUCores != 0 && int(c.Cores) != s.VCPUCores {
		rs.add(field.Invalid(p.Child("cores"), int64(c.Cores),
			fmt.Sprintf("must equal virtualMachine.template.vcpus.cores (%d) when both are set", s.VCPUCores)))
	}
	for i, feature := range c.Features {
		if feature == "" {
			rs.add(field.Required(p.Child("features").Index(i), "a CPU feature name such as pcid"))
		}
	}
	if s.Instancetype != nil {
		// KubeVirt refuses a VM whose template sets what its instancetype
		// sets.
		for _, f := range []struct {
			name  string
			value uint32
		}{{"cores", c.Cores}, {"sockets", c.Sockets}, {"threads", c.Threads}} {
			if f.value != 0 {
				rs.add(field.Forbidden(p.Child(f.name), "the instancetype sets the CPU topology"))
			}
		}
	} else if c.DedicatedCPUPlacement {
		rs.dedicatedCPUs(s, p, c)
	}
	if c.IsolateEmulatorThread && !c.DedicatedCPUPlacement {
		rs.add(field.Invalid(p.Child("isolateEmulatorThread"), true, "requires dedicatedCpuPlacement: true"))
	}
}

// maxDedicatedThreads is the most threads per core KubeVirt pins.
const maxDedicatedThreads = 2

// dedicatedCPUs checks what KubeVirt requires of a VM whose vCPUs each get a
// host CPU of their own: a whole number of CPUs requested, equal to the
// vCPUs of the topology when both are given, and at most two threads per
// core.
func (rs *resolution) dedicatedCPUs(s *Settings, p *field.Path, c *CPUTuning) {
	cpusPath := specPath.Child("virtualMachine", "template", "cpus")
	if c.Threads > maxDedicatedThreads {
		rs.add(field.Invalid(p.Child("threads"), int64(c.Threads),
			fmt.Sprintf("must be at most %d with dedicatedCpuPlacement", maxDedicatedThreads)))
	}
	vCPUs := topologyVCPUs(s, c)
	switch {
	case s.CPUs != nil && s.CPUs.MilliValue()%1000 != 0:
		rs.add(field.Invalid(p.Child("dedicatedCpuPlacement"), true,
			fmt.Sprintf("needs a whole number of CPUs, but virtualMachine.template.cpus is %s", s.CPUs)))
	case s.CPUs != nil && vCPUs != 0 && s.CPUs.Value() != vCPUs:
		rs.add(field.Invalid(cpusPath, s.CPUs.String(), fmt.Sprintf(
			"must equal the vCPUs of tuning.cpu (cores × sockets × threads = %d) with dedicatedCpuPlacement: each vCPU is pinned to a host CPU", vCPUs)))
	case s.CPUs == nil && vCPUs == 0:
		rs.add(field.Required(cpusPath, "a whole number of CPUs, or tuning.cpu cores, with dedicatedCpuPlacement"))
	}
}

// topologyVCPUs returns the vCPUs of the guest's CPU topology as KubeVirt
// counts them (cores, sockets and threads that are set, multiplied), 0 when
// no topology is set.
func topologyVCPUs(s *Settings, c *CPUTuning) int64 {
	cores := int64(c.Cores)
	if cores == 0 {
		cores = int64(s.VCPUCores)
	}
	var vCPUs int64
	for _, f := range []int64{cores, int64(c.Sockets), int64(c.Threads)} {
		switch {
		case f == 0:
		case vCPUs == 0:
			vCPUs = f
		default:
			vCPUs *= f
		}
	}
	return vCPUs
}

func (rs *resolution) memoryTuning(s *Settings, p *field.Path, m *MemoryTuning) {
	if m == nil {
		return
	}
	if m.Hugepages != nil {
		sizePath := p.Child("hugepages", "pageSize")
		if size := m.Hugepages.PageSize; size == "" {
			rs.add(field.Required(sizePath, "supported values: "+quoteList(hugepageSizes)))
		} else if enum(rs, sizePath, size, hugepageSizes) {
			s.Tuning.HugepagesPageSize = size
			rs.hugepagesMemory(s, size)
		}
	}
	if m.Guest == "" {
		return
	}
	guestPath := p.Child("guest")
	if s.Instancetype != nil {
		rs.add(field.Forbidden(guestPath, "the instancetype sets the guest memory"))
		return
	}
	guest := rs.positiveQuantity(guestPath, m.Guest, "1Gi")
	if guest != nil && s.Memory != nil && guest.Cmp(*s.Memory) > 0 {
		rs.add(field.Invalid(guestPath, m.Guest, fmt.Sprintf("must not exceed virtualMachine.template.memory (%s)", s.Memory)))
	}
	s.Tuning.GuestMemory = guest
}

// hugepagesMemory checks that the memory backed by hugepages is a whole
// number of pages, at least one: KubeVirt refuses a VM whose memory request
// is not. With an instancetype the memory is the instancetype's, which
// KubeVirt checks.
func (rs *resolution) hugepagesMemory(s *Settings, pageSize string) {
	if s.Memory == nil {
		return
	}
	page := resource.MustParse(pageSize)
	memoryPath := specPath.Child("virtualMachine", "template", "memory")
	switch {
	case s.Memory.Cmp(page) < 0:
		rs.add(field.Invalid(memoryPath, s.Memory.String(),
			fmt.Sprintf("must be at least one hugepage (tuning.memory.hugepages.pageSize %s)", pageSize)))
	case s.Memory.Value()%page.Value() != 0:
		pages := (s.Memory.Value() + page.Value() - 1) / page.Value()
		nearest := resource.NewQuantity(pages*page.Value(), resource.BinarySI)
		rs.add(field.Invalid(memoryPath, s.Memory.String(), fmt.Sprintf(
			"must be a whole number of hugepages of %s (tuning.memory.hugepages.pageSize), such as %s", pageSize, nearest)))
	}
}

// deviceTuning resolves the device settings; disks are tuned by name.
func (rs *resolution) deviceTuning(s *Settings, p *field.Path, d *DevicesTuning) {
	if d == nil {
		return
	}
	s.Tuning.RNG = d.RNG != nil
	if d.BlockMultiQueue != nil {
		s.Tuning.BlockMultiQueue = new(*d.BlockMultiQueue)
	}
	names := []string{RootDiskName}
	for _, sd := range s.SecondaryDisks {
		names = append(names, sd.Name)
	}
	tuned := map[string]bool{}
	for i, dt := range d.Disks {
		dp := p.Child("disks").Index(i)
		namePath := dp.Child("name")
		at := slices.Index(names, dt.Name)
		switch {
		case dt.Name == "":
			rs.add(field.Required(namePath, "supported values: "+quoteList(names)))
		case at < 0:
			rs.add(field.NotSupported(namePath, dt.Name, names))
		case tuned[dt.Name]:
			rs.add(field.Duplicate(namePath, dt.Name))
		}
		tuned[dt.Name] = true
		settings := rs.diskTuning(dp, dt)
		switch {
		case at == 0:
			s.PrimaryDisk.Tuning = settings
		case at > 0:
			s.SecondaryDisks[at-1].Tuning = settings
		}
	}
}

func (rs *resolution) diskTuning(p *field.Path, dt DiskTuning) DiskTuningSettings {
	out := DiskTuningSettings{Cache: kubevirtcorev1.DriverCache(dt.Cache)}
	if dt.DedicatedIOThread != nil {
		out.DedicatedIOThread = new(*dt.DedicatedIOThread)
	}
	if dt.Disk != nil && dt.Disk.Bus != "" {
		out.Bus = kubevirtcorev1.DiskBus(dt.Disk.Bus)
		enum(rs, p.Child("disk", "bus"), out.Bus, diskBuses)
	}
	if out.Cache != "" {
		enum(rs, p.Child("cache"), out.Cache, diskCaches)
	}
	return out
}
