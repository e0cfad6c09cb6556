package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"go.uber.org/zap"
	kubevirtcorev1 "kubevirt.io/api/core/v1"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

const demoUserData = "#cloud-config\nhostname: demo\n"

// createAndWait validates the spec, creates every Machine's instance and
// waits until all of them run, printing progress and a final table.
func createAndWait(ctx context.Context, o options, p *kubevirt.Provider, data *cloudprovider.ProviderData, machines machineList) error {
	if err := p.Validate(ctx, o.log, machines[0].Spec); err != nil {
		return fmt.Errorf("the example's spec is invalid: %w", err)
	}
	o.step("Spec valid; creating VirtualMachines in namespace %s", infraNamespace)
	for _, m := range machines {
		if _, err := p.Create(ctx, o.log, m, data, demoUserData); err != nil {
			return fmt.Errorf("failed to create the instance of Machine %s: %w", m.Name, err)
		}
	}
	deadline := time.Now().Add(o.timeout)
	last := ""
	for {
		instances, running, err := getAll(ctx, o.log, p, data, machines)
		if err != nil {
			return err
		}
		if progress := fmt.Sprintf("%d/%d VMs running", running, len(machines)); progress != last {
			o.step("%s", progress)
			last = progress
		}
		if running == len(machines) {
			printTable(o, machines, instances)
			return nil
		}
		if time.Now().After(deadline) {
			printTable(o, machines, instances)
			return fmt.Errorf("only %d of %d VMs run after %s", running, len(machines), o.timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func getAll(ctx context.Context, log *zap.SugaredLogger, p *kubevirt.Provider, data *cloudprovider.ProviderData, machines machineList) ([]cloudprovider.Instance, int, error) {
	instances := make([]cloudprovider.Instance, len(machines))
	running := 0
	for i, m := range machines {
		inst, err := p.Get(ctx, log, m, data)
		if err != nil {
			return nil, 0, fmt.Errorf("failed to get the instance of Machine %s: %w", m.Name, err)
		}
		instances[i] = inst
		if inst.Status() == cloudprovider.StatusRunning {
			running++
		}
	}
	return instances, running, nil
}

func printTable(o options, machines machineList, instances []cloudprovider.Instance) {
	fmt.Fprintln(o.out)
	w := tabwriter.NewWriter(o.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "MACHINE\tVIRTUALMACHINE\tSTATUS\tADDRESSES\tPROVIDER-ID")
	for i, m := range machines {
		inst := instances[i]
		addrs := make([]string, 0, len(inst.Addresses()))
		for a := range inst.Addresses() {
			addrs = append(addrs, a)
		}
		sort.Strings(addrs)
		fmt.Fprintf(w, "%s\t%s/%s\t%s\t%s\t%s\n", m.Name, infraNamespace, inst.Name(), inst.Status(), strings.Join(addrs, ","), inst.ProviderID())
	}
	_ = w.Flush()
}

// cleanup calls Cleanup for every Machine until all report done, then
// checks that no VM, VMI, DataVolume or Secret is left.
func cleanup(ctx context.Context, o options, env *envtest.Env, p *kubevirt.Provider, data *cloudprovider.ProviderData, machines machineList) error {
	o.step("Deleting the instances")
	pending := machines
	for len(pending) > 0 {
		var next machineList
		for _, m := range pending {
			done, err := p.Cleanup(ctx, o.log, m, data)
			if err != nil {
				return fmt.Errorf("failed to clean up Machine %s: %w", m.Name, err)
			}
			if !done {
				next = append(next, m)
			}
		}
		pending = next
		if len(pending) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d instances still being deleted: %w", len(pending), ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
	left, err := leftovers(ctx, env.Client)
	if err != nil {
		return err
	}
	if left != "" {
		return errors.New("left behind on the infra cluster: " + left)
	}
	o.step("All VirtualMachines, VMIs, DataVolumes and Secrets are gone")
	return nil
}

func leftovers(ctx context.Context, c ctrlruntimeclient.Client) (string, error) {
	lists := map[string]ctrlruntimeclient.ObjectList{
		"VirtualMachines":         &kubevirtcorev1.VirtualMachineList{},
		"VirtualMachineInstances": &kubevirtcorev1.VirtualMachineInstanceList{},
		"DataVolumes":             &cdicorev1beta1.DataVolumeList{},
		"Secrets":                 &corev1.SecretList{},
	}
	var parts []string
	for name, list := range lists {
		if err := c.List(ctx, list, ctrlruntimeclient.InNamespace(infraNamespace)); err != nil {
			return "", fmt.Errorf("failed to list %s: %w", name, err)
		}
		if n := meta.LenList(list); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, name))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ", "), nil
}
