package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/imagecache"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/tenant"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// world is what the demo observes on both clusters.
type world struct {
	machines []clusterv1alpha1.Machine
	vms      map[string]kubevirtcorev1.VirtualMachineInstance
	vmCount  int
	nodes    map[string]corev1.Node
}

func observe(ctx context.Context, cl *clusters, md *clusterv1alpha1.MachineDeployment) (*world, error) {
	w := &world{vms: map[string]kubevirtcorev1.VirtualMachineInstance{}, nodes: map[string]corev1.Node{}}
	machines := &clusterv1alpha1.MachineList{}
	if err := cl.user.Client.List(ctx, machines, ctrlruntimeclient.InNamespace(md.Namespace),
		ctrlruntimeclient.MatchingLabels(md.Spec.Selector.MatchLabels)); err != nil {
		return nil, fmt.Errorf("failed to list Machines: %w", err)
	}
	w.machines = machines.Items
	sort.Slice(w.machines, func(i, j int) bool { return w.machines[i].Name < w.machines[j].Name })
	vms := &kubevirtcorev1.VirtualMachineList{}
	vmis := &kubevirtcorev1.VirtualMachineInstanceList{}
	nodes := &corev1.NodeList{}
	for _, list := range []struct {
		c    ctrlruntimeclient.Client
		list ctrlruntimeclient.ObjectList
		opts []ctrlruntimeclient.ListOption
	}{
		{cl.infra.Client, vms, []ctrlruntimeclient.ListOption{ctrlruntimeclient.InNamespace(infraNamespace)}},
		{cl.infra.Client, vmis, []ctrlruntimeclient.ListOption{ctrlruntimeclient.InNamespace(infraNamespace)}},
		{cl.user.Client, nodes, nil},
	} {
		if err := list.c.List(ctx, list.list, list.opts...); err != nil {
			return nil, fmt.Errorf("failed to list %T: %w", list.list, err)
		}
	}
	w.vmCount = len(vms.Items)
	for _, vmi := range vmis.Items {
		w.vms[vmi.Name] = vmi
	}
	for _, n := range nodes.Items {
		w.nodes[n.Name] = n
	}
	return w, nil
}

// readyNodes counts Machines whose Node is linked and Ready.
func (w *world) readyNodes() int {
	n := 0
	for _, m := range w.machines {
		if m.Status.NodeRef != nil && nodeReady(w.nodes[m.Status.NodeRef.Name]) {
			n++
		}
	}
	return n
}

func (w *world) summary(want int32) string {
	running := 0
	for _, vmi := range w.vms {
		if vmi.Status.Phase == kubevirtcorev1.Running {
			running++
		}
	}
	return fmt.Sprintf("Machines %d/%d, VMs %d (running %d), Nodes ready %d/%d",
		len(w.machines), want, w.vmCount, running, w.readyNodes(), want)
}

// waitReady waits until every Machine of md has a Ready Node, printing
// progress, then prints the table and how to look around.
func waitReady(ctx context.Context, o options, cl *clusters, md *clusterv1alpha1.MachineDeployment) error {
	want := replicasOf(md)
	deadline := time.Now().Add(o.timeout)
	last := ""
	for {
		w, err := observe(ctx, cl, md)
		if err != nil {
			return err
		}
		if s := w.summary(want); s != last {
			o.stepf("%s", s)
			last = s
		}
		if len(w.machines) == int(want) && w.readyNodes() == int(want) {
			o.printTable(w)
			return nil
		}
		if time.Now().After(deadline) {
			o.printTable(w)
			return fmt.Errorf("not every Machine has a Ready Node after %s: %s", o.timeout, last)
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return err
		}
	}
}

func (o options) printTable(w *world) {
	fmt.Fprintln(o.out)
	tw := tabwriter.NewWriter(o.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MACHINE\tVM (infra)\tPHASE\tADDRESS\tNODE (user)\tREADY")
	for _, m := range w.machines {
		vmi := w.vms[m.Name]
		addr, node, ready := "", "<none>", "-"
		if len(vmi.Status.Interfaces) > 0 {
			addr = vmi.Status.Interfaces[0].IP
		}
		if m.Status.NodeRef != nil {
			node = m.Status.NodeRef.Name
			ready = fmt.Sprint(nodeReady(w.nodes[node]))
		}
		fmt.Fprintf(tw, "%s\t%s/%s\t%s\t%s\t%s\t%s\n", m.Name, infraNamespace, m.Name, vmi.Status.Phase, addr, node, ready)
	}
	_ = tw.Flush()
	fmt.Fprintf(o.out, "\nLook around with kubectl:\n  kubectl --kubeconfig %[1]s/user.kubeconfig get machinedeployments,machinesets,machines,nodes,storageclasses -A\n  kubectl --kubeconfig %[1]s/infra.kubeconfig get tenantclusters\n  kubectl --kubeconfig %[1]s/infra.kubeconfig -n %[2]s get virtualmachines,virtualmachineinstances,datavolumes,virtualmachineinstancepresets,networkpolicies\n\n", o.workDir, infraNamespace)
}

// deleteAndVerify deletes the MachineDeployment and waits until nothing it
// made is left on either cluster.
func deleteAndVerify(ctx context.Context, o options, cl *clusters, md *clusterv1alpha1.MachineDeployment) error {
	o.stepf("Deleting MachineDeployment %s/%s", md.Namespace, md.Name)
	if err := cl.user.Client.Delete(ctx, md, ctrlruntimeclient.PropagationPolicy("Background")); ctrlruntimeclient.IgnoreNotFound(err) != nil {
		return fmt.Errorf("failed to delete the MachineDeployment: %w", err)
	}
	for {
		left, err := leftovers(ctx, cl, md.Namespace)
		if err != nil {
			return err
		}
		if left == "" {
			o.stepf("Nothing left: no Machine, MachineSet, Node, VM, VMI, DataVolume or Secret (the image cache DataVolume stays for the next VMs of this image)")
			return nil
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return errors.New("still left after the timeout: " + left)
		}
	}
}

func leftovers(ctx context.Context, cl *clusters, namespace string) (string, error) {
	// The image cache DataVolume outlives the VMs on purpose: the next VMs of
	// the same image clone it (the infra-controller removes it once unused
	// for its grace period), and what the infra-controller keeps for the
	// tenant goes with the TenantCluster. Everything else must go.
	notCache, err := labels.Parse("!" + imagecache.Label + "," + tenant.ManagedByLabel + "!=" + tenant.ManagedByValue)
	if err != nil {
		return "", err
	}
	checks := []struct {
		name string
		c    ctrlruntimeclient.Client
		list ctrlruntimeclient.ObjectList
		ns   string
	}{
		{"MachineSets", cl.user.Client, &clusterv1alpha1.MachineSetList{}, namespace},
		{"Machines", cl.user.Client, &clusterv1alpha1.MachineList{}, namespace},
		{"Nodes", cl.user.Client, &corev1.NodeList{}, ""},
		{"VMs", cl.infra.Client, &kubevirtcorev1.VirtualMachineList{}, infraNamespace},
		{"VMIs", cl.infra.Client, &kubevirtcorev1.VirtualMachineInstanceList{}, infraNamespace},
		{"DataVolumes", cl.infra.Client, &cdicorev1beta1.DataVolumeList{}, infraNamespace},
		{"Secrets", cl.infra.Client, &corev1.SecretList{}, infraNamespace},
	}
	var parts []string
	for _, c := range checks {
		if err := c.c.List(ctx, c.list, ctrlruntimeclient.InNamespace(c.ns), ctrlruntimeclient.MatchingLabelsSelector{Selector: notCache}); err != nil {
			return "", fmt.Errorf("failed to list %s: %w", c.name, err)
		}
		if n := meta.LenList(c.list); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, c.name))
		}
	}
	return strings.Join(parts, ", "), nil
}

func nodeReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
