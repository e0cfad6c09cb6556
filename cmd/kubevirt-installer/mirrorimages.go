package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
)

// mirrorImagesOptions are the options of mirror-images.
type mirrorImagesOptions struct {
	*globalOptions
	transfer transferFlags
	registry string
	skip     []string
}

func newMirrorImagesCommand(g *globalOptions) *cobra.Command {
	o := &mirrorImagesOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "mirror-images --registry HOST[:PORT][/PATH]",
		Short: "Copy every image of the installation straight into a private registry",
		Long: `mirror-images does what bundle create and bundle push do together, without a
bundle, for hosts that reach both the upstream registries and the private
one. Install afterwards with --registry.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context()) },
	}
	cmd.Flags().StringVar(&o.registry, "registry", "", "private registry HOST[:PORT][/PATH] to copy to")
	cmd.Flags().StringSliceVar(&o.skip, "skip", nil, "components whose images to leave out: cni-plugins, multus, kubevirt, cdi")
	_ = cmd.MarkFlagRequired("registry")
	o.transfer.bind(cmd.Flags(), true)
	return cmd
}

// Run copies the images.
func (o *mirrorImagesOptions) Run(ctx context.Context) error {
	reg, err := mirror.ParseRegistry(o.registry)
	if err != nil {
		return err
	}
	cs, err := components.Without(components.Default(), o.skip)
	if err != nil {
		return err
	}
	releases, err := components.Load(cs)
	if err != nil {
		return err
	}
	opts, err := o.transfer.options(o.globalOptions)
	if err != nil {
		return err
	}
	mirrors, err := o.transfer.mirrors()
	if err != nil {
		return err
	}
	items, err := mirror.Pull(ctx, installer.Images(releases), mirrors, opts)
	if err != nil {
		return err
	}
	if err := mirror.Copy(ctx, items, reg, opts); err != nil {
		return err
	}
	fmt.Fprintf(o.out, "mirrored %d images to %s\n", len(items), reg)
	return nil
}
