package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/status"
)

// statusOptions are the options of status.
type statusOptions struct {
	*globalOptions
}

func newStatusCommand(g *globalOptions) *cobra.Command {
	o := &statusOptions{globalOptions: g}
	return &cobra.Command{
		Use:   "status",
		Short: "Show each component's versions, readiness and problems",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context()) },
	}
}

// Run prints the status table.
func (o *statusOptions) Run(ctx context.Context) error {
	releases, err := components.Load(components.Default())
	if err != nil {
		return err
	}
	inst, err := o.newInstaller(releases)
	if err != nil {
		return err
	}
	st, err := status.Collect(ctx, inst.Client, inst.Helm, releases)
	if err != nil {
		return err
	}
	return status.Write(o.out, st)
}
