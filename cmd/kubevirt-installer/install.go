package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/preflight"
)

// installOptions are the options of install and upgrade.
type installOptions struct {
	*globalOptions
	values        valueFlags
	relocation    relocationFlags
	upgrade       bool
	skipPreflight bool
}

func newInstallCommand(g *globalOptions, upgrade bool) *cobra.Command {
	o := &installOptions{globalOptions: g, upgrade: upgrade}
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Install the components that are missing and apply changed values",
		Long: `install converges the cluster in dependency order (cni-plugins, multus,
kubevirt, cdi): it creates each namespace, applies the CRDs, installs or
updates the Helm release and waits until the component is ready. Components
that would not change are left alone. It refuses to change a component's
version; that is what upgrade is for.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context()) },
	}
	if upgrade {
		cmd.Use = "upgrade"
		cmd.Short = "Move installed components to the pinned versions"
		cmd.Long = `upgrade does what install does and also moves installed components to the
versions this installer pins, one component at a time, waiting until the
operators report the new version rolled out. KubeVirt moves at most one
minor version per upgrade; downgrades are refused.`
	}
	o.values.bind(cmd.Flags())
	o.relocation.bind(cmd.Flags(), true)
	cmd.Flags().BoolVar(&o.skipPreflight, "skip-preflight", false, "do not stop on preflight errors")
	return cmd
}

// Run installs or upgrades.
func (o *installOptions) Run(ctx context.Context) error {
	cfg, releases, err := o.plan(&o.values, &o.relocation)
	if err != nil {
		return err
	}
	inst, err := o.newInstaller(releases)
	if err != nil {
		return err
	}
	if !o.skipPreflight {
		findings, err := o.runPreflight(ctx, inst, cfg)
		if err != nil {
			return err
		}
		if preflight.HasErrors(findings) {
			if err := preflight.Write(o.out, findings); err != nil {
				return err
			}
			return errors.New("preflight found errors (above); fix them or pass --skip-preflight")
		}
	}
	results, err := inst.Install(ctx, installer.Options{Values: cfg.Values, Upgrade: o.upgrade})
	if err != nil {
		return err
	}
	counts := map[installer.Action]int{}
	for _, r := range results {
		counts[r.Action]++
	}
	fmt.Fprintf(o.out, "done: %d installed, %d upgraded, %d reconfigured, %d unchanged\n",
		counts[installer.ActionInstalled], counts[installer.ActionUpgraded], counts[installer.ActionConfigured], counts[installer.ActionUnchanged])
	return nil
}
