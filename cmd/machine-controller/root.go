package main

import (
	"io"

	"github.com/spf13/cobra"
)

// newRootCmd wires the sub-commands; all output goes to the given writers.
func newRootCmd(in io.Reader, out, errOut io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "machine-controller",
		Short:         "Kubermatic-compatible machine-controller for KubeVirt infra clusters",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errOut)
	root.AddCommand(newRenderCmd(in, out, errOut))
	root.AddCommand(newCatalogCmd(out))
	root.AddCommand(newRunCmd(errOut))
	root.AddCommand(newWebhookCmd(errOut))
	return root
}
