package kubevirt

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestStatusOf(t *testing.T) {
	now := metav1.Now()
	vmi := func(phase kubevirtcorev1.VirtualMachineInstancePhase, deleting bool) *kubevirtcorev1.VirtualMachineInstance {
		out := &kubevirtcorev1.VirtualMachineInstance{Status: kubevirtcorev1.VirtualMachineInstanceStatus{Phase: phase}}
		if deleting {
			out.DeletionTimestamp = &now
		}
		return out
	}
	tests := []struct {
		name       string
		vmDeleting bool
		vmStatus   kubevirtcorev1.VirtualMachinePrintableStatus
		vmi        *kubevirtcorev1.VirtualMachineInstance
		want       cloudprovider.InstanceStatus
	}{
		{name: "no VMI yet", want: cloudprovider.StatusCreating},
		{name: "VM being deleted", vmDeleting: true, vmi: vmi(kubevirtcorev1.Running, false), want: cloudprovider.StatusDeleting},
		{name: "VMI being deleted", vmi: vmi(kubevirtcorev1.Running, true), want: cloudprovider.StatusDeleting},
		{name: "phase unset", vmi: vmi("", false), want: cloudprovider.StatusCreating},
		{name: "pending", vmi: vmi(kubevirtcorev1.Pending, false), want: cloudprovider.StatusCreating},
		{name: "scheduling", vmi: vmi(kubevirtcorev1.Scheduling, false), want: cloudprovider.StatusCreating},
		{name: "scheduled", vmi: vmi(kubevirtcorev1.Scheduled, false), want: cloudprovider.StatusCreating},
		{name: "running", vmi: vmi(kubevirtcorev1.Running, false), want: cloudprovider.StatusRunning},
		{name: "succeeded", vmi: vmi(kubevirtcorev1.Succeeded, false), want: cloudprovider.StatusStopped},
		{name: "failed", vmi: vmi(kubevirtcorev1.Failed, false), want: cloudprovider.StatusStopped},
		{name: "crash loop without VMI", vmStatus: kubevirtcorev1.VirtualMachineStatusCrashLoopBackOff, want: cloudprovider.StatusStopped},
		{name: "data volume error", vmStatus: kubevirtcorev1.VirtualMachineStatusDataVolumeError, vmi: vmi(kubevirtcorev1.Pending, false), want: cloudprovider.StatusStopped},
		{name: "crash loop, VM being deleted", vmDeleting: true, vmStatus: kubevirtcorev1.VirtualMachineStatusCrashLoopBackOff, want: cloudprovider.StatusDeleting},
		{name: "starting VM", vmStatus: kubevirtcorev1.VirtualMachineStatusStarting, want: cloudprovider.StatusCreating},
		{name: "unknown", vmi: vmi(kubevirtcorev1.Unknown, false), want: cloudprovider.StatusUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &kubevirtcorev1.VirtualMachine{Status: kubevirtcorev1.VirtualMachineStatus{PrintableStatus: tt.vmStatus}}
			if tt.vmDeleting {
				v.DeletionTimestamp = &now
			}
			if got := statusOf(v, tt.vmi); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestAddressesOf(t *testing.T) {
	iface := func(ip string, ips ...string) kubevirtcorev1.VirtualMachineInstanceNetworkInterface {
		return kubevirtcorev1.VirtualMachineInstanceNetworkInterface{IP: ip, IPs: ips}
	}
	internal := corev1.NodeInternalIP
	tests := []struct {
		name       string
		interfaces []kubevirtcorev1.VirtualMachineInstanceNetworkInterface
		want       map[string]corev1.NodeAddressType
	}{
		{name: "none", want: map[string]corev1.NodeAddressType{}},
		{name: "singular field only", interfaces: []kubevirtcorev1.VirtualMachineInstanceNetworkInterface{iface("10.0.0.1")},
			want: map[string]corev1.NodeAddressType{"10.0.0.1": internal}},
		{name: "CIDR suffixes and duplicates", interfaces: []kubevirtcorev1.VirtualMachineInstanceNetworkInterface{iface("10.0.0.1/24", "10.0.0.1", "10.0.0.1/24")},
			want: map[string]corev1.NodeAddressType{"10.0.0.1": internal}},
		{name: "dual stack on several interfaces", interfaces: []kubevirtcorev1.VirtualMachineInstanceNetworkInterface{
			iface("", "10.0.0.1", "FD00:0:0::1/64"), iface("192.168.1.2", "192.168.1.2"),
		}, want: map[string]corev1.NodeAddressType{"10.0.0.1": internal, "fd00::1": internal, "192.168.1.2": internal}},
		{name: "link-local, loopback, unspecified and garbage skipped", interfaces: []kubevirtcorev1.VirtualMachineInstanceNetworkInterface{
			iface("fe80::1", "169.254.1.1", "127.0.0.1", "0.0.0.0", "::", "not-an-ip", " "),
		}, want: map[string]corev1.NodeAddressType{}},
		{name: "IPv4-mapped IPv6", interfaces: []kubevirtcorev1.VirtualMachineInstanceNetworkInterface{iface("::ffff:10.1.2.3")},
			want: map[string]corev1.NodeAddressType{"10.1.2.3": internal}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := &kubevirtcorev1.VirtualMachineInstance{Status: kubevirtcorev1.VirtualMachineInstanceStatus{Interfaces: tt.interfaces}}
			if diff := cmp.Diff(tt.want, addressesOf(vmi)); diff != "" {
				t.Errorf("addresses (-want +got):\n%s", diff)
			}
		})
	}
	if got := addressesOf(nil); len(got) != 0 {
		t.Errorf("no VMI: got %v", got)
	}
}

func TestNewInstance(t *testing.T) {
	v := &kubevirtcorev1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "worker-1", UID: "1234"}}
	want := instanceView{Name: "worker-1", ID: "1234", ProviderID: "kubevirt://worker-1", Addresses: map[string]corev1.NodeAddressType{}, Status: cloudprovider.StatusCreating}
	if diff := cmp.Diff(want, viewOf(newInstance(v, nil))); diff != "" {
		t.Errorf("instance (-want +got):\n%s", diff)
	}
}

// The instance reports the region and zone labels of its VM, so the
// controller can put them on the Node; "default" means no location.
func TestInstanceTopology(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   map[string]string
	}{
		{name: "no labels", want: map[string]string{}},
		{name: "region and zone", labels: map[string]string{vm.LabelRegion: "eu", vm.LabelZone: "eu-1", "other": "x"},
			want: map[string]string{vm.LabelRegion: "eu", vm.LabelZone: "eu-1"}},
		{name: "default region", labels: map[string]string{vm.LabelRegion: vm.DefaultLocation, vm.LabelZone: "eu-1"},
			want: map[string]string{vm.LabelZone: "eu-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &kubevirtcorev1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "worker-1", Labels: tc.labels}}
			if diff := cmp.Diff(tc.want, newInstance(v, nil).Topology()); diff != "" {
				t.Errorf("topology (-want +got):\n%s", diff)
			}
		})
	}
}

// The instance reports kube-scheduler's reason while the VMI waits for its
// pod to be placed, and nothing once it is scheduled, runs or goes.
func TestInstanceWaitingFor(t *testing.T) {
	unscheduled := kubevirtcorev1.VirtualMachineInstanceCondition{
		Type: kubevirtcorev1.VirtualMachineInstanceConditionType(corev1.PodScheduled), Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules.",
	}
	scheduled := unscheduled
	scheduled.Status, scheduled.Reason, scheduled.Message = corev1.ConditionTrue, "", ""
	for _, tc := range []struct {
		name       string
		phase      kubevirtcorev1.VirtualMachineInstancePhase
		conditions []kubevirtcorev1.VirtualMachineInstanceCondition
		deleting   bool
		reason     string
	}{
		{name: "pending, unschedulable", phase: kubevirtcorev1.Pending, conditions: []kubevirtcorev1.VirtualMachineInstanceCondition{unscheduled}, reason: corev1.PodReasonUnschedulable},
		{name: "scheduling, unschedulable", phase: kubevirtcorev1.Scheduling, conditions: []kubevirtcorev1.VirtualMachineInstanceCondition{unscheduled}, reason: corev1.PodReasonUnschedulable},
		{name: "pending, no condition", phase: kubevirtcorev1.Pending},
		{name: "pending, scheduled", phase: kubevirtcorev1.Pending, conditions: []kubevirtcorev1.VirtualMachineInstanceCondition{scheduled}},
		{name: "running with a stale condition", phase: kubevirtcorev1.Running, conditions: []kubevirtcorev1.VirtualMachineInstanceCondition{unscheduled}},
		{name: "deleting", phase: kubevirtcorev1.Pending, conditions: []kubevirtcorev1.VirtualMachineInstanceCondition{unscheduled}, deleting: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &kubevirtcorev1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "worker-1"}}
			vmi := &kubevirtcorev1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "worker-1"},
				Status: kubevirtcorev1.VirtualMachineInstanceStatus{Phase: tc.phase, Conditions: tc.conditions}}
			if tc.deleting {
				vmi.DeletionTimestamp = &metav1.Time{}
			}
			reason, message := newInstance(v, vmi).WaitingFor()
			if reason != tc.reason || (reason == "") != (message == "") {
				t.Errorf("WaitingFor() = %q, %q; want reason %q with its message", reason, message, tc.reason)
			}
		})
	}
}
