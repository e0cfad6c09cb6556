package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer"
)

// imagesOptions are the options of images.
type imagesOptions struct {
	*globalOptions
	values     valueFlags
	relocation relocationFlags
}

func newImagesCommand(g *globalOptions) *cobra.Command {
	o := &imagesOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "images",
		Short: "Print every image the installation runs, one per line, sorted",
		Long: `images prints every container image the installation runs, including the
images the KubeVirt and CDI operators deploy at run time (virt-api,
virt-handler, virt-launcher, cdi-importer, ...), from the installer's pinned
image table.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context()) },
	}
	o.values.bind(cmd.Flags())
	o.relocation.bind(cmd.Flags(), false)
	return cmd
}

// Run prints the images.
func (o *imagesOptions) Run(_ context.Context) error {
	cfg, err := o.values.configuration()
	if err != nil {
		return err
	}
	releases, err := o.relocation.releases(cfg)
	if err != nil {
		return err
	}
	for _, ref := range installer.Images(releases) {
		fmt.Fprintln(o.out, ref)
	}
	return nil
}
