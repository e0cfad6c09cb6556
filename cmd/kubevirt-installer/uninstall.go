package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
)

// uninstallOptions are the options of uninstall.
type uninstallOptions struct {
	*globalOptions
	crds bool
}

func newUninstallCommand(g *globalOptions) *cobra.Command {
	o := &uninstallOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Remove every component the installer installed",
		Long: `uninstall deletes the KubeVirt and CDI resources first and waits until their
operators have removed what they deployed, deletes operand webhooks and
APIServices they left behind, uninstalls the Helm releases and deletes the
namespaces the installer created. CRDs, and with them every remaining
custom resource of their kinds, are deleted only with --crds. Objects the
installer did not create are never touched.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context()) },
	}
	cmd.Flags().BoolVar(&o.crds, "crds", false, "also delete the CRDs (KubeVirt, CDI, NetworkAttachmentDefinition)")
	return cmd
}

// Run uninstalls.
func (o *uninstallOptions) Run(ctx context.Context) error {
	if err := o.validate(); err != nil {
		return refuse([]error{err})
	}
	releases, err := components.Load(components.Default())
	if err != nil {
		return err
	}
	inst, err := o.newInstaller(releases)
	if err != nil {
		return err
	}
	if err := inst.Uninstall(ctx, installer.UninstallOptions{CRDs: o.crds}); err != nil {
		return err
	}
	fmt.Fprintln(o.out, "done")
	return nil
}
