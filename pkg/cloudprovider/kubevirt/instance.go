package kubevirt

import (
	"net/netip"
	"slices"
	"strings"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"

	corev1 "k8s.io/api/core/v1"
)

// instance is a Machine's VirtualMachine as the controller sees it.
type instance struct {
	name       string
	id         string
	providerID string
	addresses  map[string]corev1.NodeAddressType
	status     cloudprovider.InstanceStatus
	topology   map[string]string
	infra      *infra.Client
	// waitReason and waitMessage are why the VMI does not run yet.
	waitReason, waitMessage string
}

var (
	_ cloudprovider.Instance = &instance{}
	_ cloudprovider.Waiting  = &instance{}
)

// Name implements cloudprovider.Instance: the VM's name.
func (i *instance) Name() string { return i.name }

// ID implements cloudprovider.Instance: the VM's UID.
func (i *instance) ID() string { return i.id }

// ProviderID implements cloudprovider.Instance: kubevirt://<vm>.
func (i *instance) ProviderID() string { return i.providerID }

// Addresses implements cloudprovider.Instance.
func (i *instance) Addresses() map[string]corev1.NodeAddressType { return i.addresses }

// Status implements cloudprovider.Instance.
func (i *instance) Status() cloudprovider.InstanceStatus { return i.status }

// Topology returns the region and zone labels
// (topology.kubernetes.io/region, topology.kubernetes.io/zone) of the VM:
// where it was placed, including a zone chosen by location.zones. The
// machine-controller sets them on the Node of the VM.
func (i *instance) Topology() map[string]string { return i.topology }

// WaitingFor implements cloudprovider.Waiting: the reason and message of
// the VMI's PodScheduled condition while it is False, which virt-controller
// copies from the virt-launcher pod, that is kube-scheduler's own words
// (Unschedulable: "0/3 nodes are available: ...").
func (i *instance) WaitingFor() (string, string) { return i.waitReason, i.waitMessage }

// InfraClient returns the client of the infra cluster and namespace the VM
// lives in, the one the provider read it with: the machine-controller
// watches that namespace for the Machine and evacuates its VMI through it.
// nil for an instance not read through a client.
func (i *instance) InfraClient() *infra.Client { return i.infra }

// newInstance describes a VM and its VMI (nil when there is none yet).
func newInstance(v *kubevirtcorev1.VirtualMachine, vmi *kubevirtcorev1.VirtualMachineInstance) *instance {
	inst := &instance{
		name:       v.Name,
		id:         string(v.UID),
		providerID: vm.ProviderID(v.Name),
		addresses:  addressesOf(vmi),
		status:     statusOf(v, vmi),
		topology:   vmTopology(v),
	}
	if c := unscheduled(vmi); c != nil {
		inst.waitReason, inst.waitMessage = c.Reason, c.Message
	}
	return inst
}

// unscheduled returns the VMI's PodScheduled condition while it is False
// and the VMI waits for its pod, else nil.
func unscheduled(vmi *kubevirtcorev1.VirtualMachineInstance) *kubevirtcorev1.VirtualMachineInstanceCondition {
	if vmi == nil || vmi.DeletionTimestamp != nil || vmi.Status.Phase != kubevirtcorev1.Pending && vmi.Status.Phase != kubevirtcorev1.Scheduling {
		return nil
	}
	for i, c := range vmi.Status.Conditions {
		if c.Type == kubevirtcorev1.VirtualMachineInstanceConditionType(corev1.PodScheduled) && c.Status == corev1.ConditionFalse {
			return &vmi.Status.Conditions[i]
		}
	}
	return nil
}

// vmTopology returns the region and zone labels of a VM. The value
// vm.DefaultLocation targets infra nodes without such a label, so it names
// no location.
func vmTopology(v *kubevirtcorev1.VirtualMachine) map[string]string {
	out := map[string]string{}
	for _, key := range []string{vm.LabelRegion, vm.LabelZone} {
		if value := v.Labels[key]; value != "" && value != vm.DefaultLocation {
			out[key] = value
		}
	}
	return out
}

// statusOf maps a VM and its VMI to an instance status. A VM or VMI being
// deleted is deleting; a VM that reports a failure keeping it from running
// (see failingStatuses) and a VMI that ended (Succeeded, Failed) are
// stopped: the run strategy Always makes KubeVirt restart them, and the
// controller replaces the Machine if that does not happen in time. A VM
// without VMI, or a VMI before Running, is creating; a VMI whose phase is
// unknown is unknown.
func statusOf(v *kubevirtcorev1.VirtualMachine, vmi *kubevirtcorev1.VirtualMachineInstance) cloudprovider.InstanceStatus {
	switch {
	case v.DeletionTimestamp != nil:
		return cloudprovider.StatusDeleting
	case vmi != nil && vmi.DeletionTimestamp != nil:
		return cloudprovider.StatusDeleting
	case slices.Contains(failingStatuses, v.Status.PrintableStatus):
		return cloudprovider.StatusStopped
	case vmi == nil:
		return cloudprovider.StatusCreating
	}
	switch vmi.Status.Phase {
	case kubevirtcorev1.Running:
		return cloudprovider.StatusRunning
	case kubevirtcorev1.VmPhaseUnset, kubevirtcorev1.Pending, kubevirtcorev1.Scheduling, kubevirtcorev1.Scheduled:
		return cloudprovider.StatusCreating
	case kubevirtcorev1.Succeeded, kubevirtcorev1.Failed:
		return cloudprovider.StatusStopped
	default:
		return cloudprovider.StatusUnknown
	}
}

// failingStatuses are the printable statuses of a VM that does not run and
// will not without a change: KubeVirt backs off restarts, or what the VM
// needs is missing.
var failingStatuses = []kubevirtcorev1.VirtualMachinePrintableStatus{
	kubevirtcorev1.VirtualMachineStatusCrashLoopBackOff,
	kubevirtcorev1.VirtualMachineStatusErrImagePull,
	kubevirtcorev1.VirtualMachineStatusImagePullBackOff,
	kubevirtcorev1.VirtualMachineStatusPvcNotFound,
	kubevirtcorev1.VirtualMachineStatusDataVolumeError,
}

// addressesOf returns every IP address the VMI reports on any interface,
// IPv4 and IPv6, without prefix length, as InternalIP. IPv6 link-local
// addresses are left out: they do not reach the node from elsewhere.
func addressesOf(vmi *kubevirtcorev1.VirtualMachineInstance) map[string]corev1.NodeAddressType {
	out := map[string]corev1.NodeAddressType{}
	if vmi == nil {
		return out
	}
	for _, iface := range vmi.Status.Interfaces {
		for _, raw := range append([]string{iface.IP}, iface.IPs...) {
			if ip, ok := parseIP(raw); ok {
				out[ip] = corev1.NodeInternalIP
			}
		}
	}
	return out
}

// parseIP accepts an address with or without prefix length and returns it
// in canonical form.
func parseIP(raw string) (string, bool) {
	raw = strings.TrimSpace(raw)
	if i := strings.IndexByte(raw, '/'); i >= 0 {
		raw = raw[:i]
	}
	addr, err := netip.ParseAddr(raw)
	if err != nil || addr.IsUnspecified() || addr.IsLinkLocalUnicast() || addr.IsLoopback() {
		return "", false
	}
	return addr.Unmap().String(), true
}
