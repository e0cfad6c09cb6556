package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/preflight"
)

// preflightCmdOptions are the options of preflight.
type preflightCmdOptions struct {
	*globalOptions
	values valueFlags
}

func newPreflightCommand(g *globalOptions) *cobra.Command {
	o := &preflightCmdOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "preflight",
		Short: "Check what would block or degrade an installation",
		Long: `preflight checks the Kubernetes version, that nodes can run VMs with KVM
(unless --use-emulation), that the nodes meet Kubermatic's minimum size
(3 nodes of 2 CPUs, 4 GB memory and 30 GB storage; a warning only), that
there is a default StorageClass for CDI, that
no KubeVirt, CDI or same-named Helm release exists that the installer did not
install, and that shared namespaces admit the components' pods. It takes the
same flags as install and exits non-zero on errors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context()) },
	}
	o.values.bind(cmd.Flags())
	return cmd
}

// Run prints the findings.
func (o *preflightCmdOptions) Run(ctx context.Context) error {
	cfg, releases, err := o.plan(&o.values, &relocationFlags{})
	if err != nil {
		return err
	}
	inst, err := o.newInstaller(releases)
	if err != nil {
		return err
	}
	findings, err := o.runPreflight(ctx, inst, cfg)
	if err != nil {
		return err
	}
	if err := preflight.Write(o.out, findings); err != nil {
		return err
	}
	if preflight.HasErrors(findings) {
		return errors.New("preflight found errors")
	}
	return nil
}
