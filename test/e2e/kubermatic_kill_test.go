package e2e

import (
	"fmt"
	"testing"

	kubevirtcorev1 "kubevirt.io/api/core/v1"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/kkp"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// vmQuota is the ResourceQuota that holds VM creation mid-way.
const vmQuota = "hold-vm-creation"

// vmCount is the quota resource of VirtualMachines.
const vmCount corev1.ResourceName = "count/virtualmachines.kubevirt.io"

// killMidCreate kills the controller process with SIGKILL while it is
// provably in the middle of creating the VMs of a scale-up, then starts it
// again with the same command line: every Machine ends with exactly one VM
// and one user-data Secret. A ResourceQuota admits only the first two new
// VMs, so the kill finds some Machines with a VM and others whose creation
// the controller is still retrying.
func (r *kkpRig) killMidCreate(t *testing.T, md *clusterv1alpha1.MachineDeployment, from, to int32) {
	t.Helper()
	ctx := t.Context()
	allowed := int64(from) + 2
	r.holdVMCreation(t, allowed)
	r.scale(t, md, to)
	waitFor(t, 2*timeout, "a scale-up stopped mid-create by the quota", func() (bool, string) {
		r.controller.Running(t)
		machines, vms := r.countMachinesAndVMs(t)
		return machines == int(to) && vms == int(allowed), fmt.Sprintf("machines=%d vms=%d", machines, vms)
	})
	r.controller.Kill(t)
	if machines, vms := r.countMachinesAndVMs(t); machines != int(to) || vms != int(allowed) {
		t.Fatalf("killed with %d Machines and %d VMs, want %d and %d: not mid-create", machines, vms, to, allowed)
	}
	if err := r.infra.Client.Delete(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: kkpNamespace, Name: vmQuota}}); err != nil {
		t.Fatal(err)
	}
	r.controller = kkp.Start(t, "machine-controller", r.controllerBin, r.controllerArgs, r.env)
	checkOnePerMachine(t, r.infra.Client, kkpNamespace, r.waitForMachines(t, int(to)))
}

// holdVMCreation limits the VMs of the infra namespace to n. kube-apiserver's
// quota admission judges each create; the quota's status, which
// kube-controller-manager's resourcequota controller would initialize (it
// does not run here), is set to the VMs there are.
func (r *kkpRig) holdVMCreation(t *testing.T, n int64) {
	t.Helper()
	ctx := t.Context()
	_, vms := r.countMachinesAndVMs(t)
	hard := corev1.ResourceList{vmCount: *resource.NewQuantity(n, resource.DecimalSI)}
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: kkpNamespace, Name: vmQuota}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
	if err := r.infra.Client.Create(ctx, quota); err != nil {
		t.Fatal(err)
	}
	quota.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: corev1.ResourceList{vmCount: *resource.NewQuantity(int64(vms), resource.DecimalSI)}}
	if err := r.infra.Client.Status().Update(ctx, quota); err != nil {
		t.Fatal(err)
	}
}

// countMachinesAndVMs counts the Machines not being deleted and the VMs of
// the infra namespace.
func (r *kkpRig) countMachinesAndVMs(t *testing.T) (machines, vms int) {
	t.Helper()
	ml := &clusterv1alpha1.MachineList{}
	if err := r.user.Client.List(t.Context(), ml, ctrlruntimeclient.InNamespace(machineNamespace)); err != nil {
		t.Fatal(err)
	}
	for _, m := range ml.Items {
		if m.DeletionTimestamp == nil {
			machines++
		}
	}
	vl := &kubevirtcorev1.VirtualMachineList{}
	if err := r.infra.Client.List(t.Context(), vl, ctrlruntimeclient.InNamespace(kkpNamespace)); err != nil {
		t.Fatal(err)
	}
	return machines, len(vl.Items)
}
