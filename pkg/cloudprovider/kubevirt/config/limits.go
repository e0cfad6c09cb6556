package config

import (
	"fmt"
	"reflect"

	"k8c.io/machine-controller/sdk/providerconfig"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// MaxValueBytes bounds providerSpec.value, checked before it is decoded.
// Real specs take 2 to 30 KB: the largest parts are an inline base64
// kubeconfig (a few KB per certificate) and the SSH keys (up to 128 of
// about 750 bytes). 256 KiB is what Kubernetes allows for all annotations
// of an object together.
const MaxValueBytes = 256 << 10

// Limit bounds the entries of one list or map of the spec.
type Limit struct {
	// Path is the field below providerSpec.value, as errors name it.
	Path string
	// Max is the most entries it may have.
	Max int

	// in is the Go type of the object holding the field and name its
	// JSON name: the shape check counts by them, so a field is bounded
	// wherever its type occurs (the flat format of KKP <= 2.20 included).
	in   reflect.Type
	name string
}

// limitKey is a field of a struct type.
type limitKey struct {
	in   reflect.Type
	name string
}

// limitsByField indexes limits by their field.
var limitsByField = func() map[limitKey]Limit {
	m := make(map[limitKey]Limit, len(limits))
	for _, l := range limits {
		m[limitKey{l.in, l.name}] = l
	}
	return m
}()

// limitOf returns the limit of field name of the struct type in.
func limitOf(in reflect.Type, name string) (Limit, bool) {
	l, ok := limitsByField[limitKey{in, name}]
	return l, ok
}

// Limits returns the limit of every bounded list and map; each is checked
// before any of its entries, so a spec over a limit costs no more than
// its decoding. docs/provider-spec.md ("Limits") gives the reason for
// each number.
func Limits() []Limit { return append([]Limit(nil), limits...) }

func limit[T any](path, name string, maxEntries int) Limit {
	return Limit{Path: path, Max: maxEntries, in: reflect.TypeFor[T](), name: name}
}

const (
	vmPath       = "cloudProviderSpec.virtualMachine"
	templatePath = vmPath + ".template"
)

// MaxSecondaryDisks bounds virtualMachine.template.secondaryDisks: each is
// a DataVolume and a PVC per Machine; the VM's MSI vectors (MaxMSIVectors)
// would allow about 190.
const MaxSecondaryDisks = 64

// MaxSSHPublicKeys bounds sshPublicKeys: the keys of a large team (KKP
// puts every key assigned to the cluster there).
const MaxSSHPublicKeys = 128

var limits = []Limit{
	limit[providerconfig.Config]("sshPublicKeys", "sshPublicKeys", MaxSSHPublicKeys),
	limit[providerconfig.DNSConfig]("network.dns.servers", "servers", 8),
	limit[Template](templatePath+".secondaryDisks", "secondaryDisks", MaxSecondaryDisks),
	limit[Template](templatePath+".gpus", "gpus", 16),
	limit[Template](templatePath+".hostDevices", "hostDevices", 32),
	limit[PrimaryDisk](templatePath+".primaryDisk.extraHeaders", "extraHeaders", 32),
	limit[VirtualMachine](vmPath+".networks", "networks", 32),
	limit[VirtualMachine](vmPath+".tolerations", "tolerations", 64),
	limit[VirtualMachine](vmPath+".nodeSelector", "nodeSelector", 32),
	limit[Location](vmPath+".location.zones", "zones", 32),
	limit[corev1.PodDNSConfig](vmPath+".dnsConfig.nameservers", "nameservers", maxNameservers),
	limit[corev1.PodDNSConfig](vmPath+".dnsConfig.searches", "searches", 32),
	limit[corev1.PodDNSConfig](vmPath+".dnsConfig.options", "options", 32),
	limit[SSHService](vmPath+".sshService.loadBalancerSourceRanges", "loadBalancerSourceRanges", 64),
	limit[SSHService](vmPath+".sshService.annotations", "annotations", 64),
	limit[CPUTuning](vmPath+".tuning.cpu.features", "features", 128),
	limit[DevicesTuning](vmPath+".tuning.devices.disks", "disks", MaxSecondaryDisks+1),
	limit[NodeAffinityPreset]("cloudProviderSpec.affinity.nodeAffinityPreset.values", "values", 128),
	limit[RawConfig]("cloudProviderSpec.topologySpreadConstraints", "topologySpreadConstraints", 16),
}

// checkSize refuses a providerSpec.value over MaxValueBytes.
func checkSize(value []byte) *field.Error {
	if len(value) <= MaxValueBytes {
		return nil
	}
	e := field.TooLong(rootPath, "", MaxValueBytes)
	e.Detail += fmt.Sprintf(" (it has %d)", len(value))
	return e
}

// entries returns the number of entries of a decoded list or map, or -1
// for other values (which the shape check reports).
func entries(v any) int {
	switch v := v.(type) {
	case []any:
		return len(v)
	case map[string]any:
		return len(v)
	}
	return -1
}
