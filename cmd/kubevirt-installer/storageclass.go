package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/storageclass"
)

// storageClassOptions are the options of the storageclass commands.
type storageClassOptions struct {
	*globalOptions
}

func newStorageClassCommand(g *globalOptions) *cobra.Command {
	o := &storageClassOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "storageclass",
		Short: "Make infra StorageClasses usable from tenant clusters",
		Long: `Tenant clusters get a StorageClass "kubevirt-<name>" for every infra StorageClass annotated
` + storageclass.InitializeAnnotation + `: "true". The annotation can be set or removed at any
time, also after tenant clusters exist: the infra-controller watches the infra StorageClasses and,
within seconds, adds the class to every tenant cluster or deletes it from every one (volumes
already provisioned stay). See docs/infra-controller.md.`,
	}
	cmd.AddCommand(
		&cobra.Command{
			Use:   "init NAME...",
			Short: "Annotate infra StorageClasses for use by tenant clusters",
			Args:  cobra.MinimumNArgs(1),
			RunE:  func(cmd *cobra.Command, args []string) error { return o.Set(cmd.Context(), args, true) },
		},
		&cobra.Command{
			Use:   "remove NAME...",
			Short: "Remove the annotation; tenant clusters lose the matching classes",
			Args:  cobra.MinimumNArgs(1),
			RunE:  func(cmd *cobra.Command, args []string) error { return o.Set(cmd.Context(), args, false) },
		},
		&cobra.Command{
			Use:   "list",
			Short: "List the infra StorageClasses and which are initialized for tenant clusters",
			Args:  cobra.NoArgs,
			RunE:  func(cmd *cobra.Command, _ []string) error { return o.List(cmd.Context()) },
		},
	)
	return cmd
}

// Set annotates (initialize) or un-annotates the named classes.
func (o *storageClassOptions) Set(ctx context.Context, names []string, initialize bool) error {
	cfg, err := o.restConfig()
	if err != nil {
		return err
	}
	c, err := installer.NewClient(cfg)
	if err != nil {
		return err
	}
	changes, err := storageclass.Set(ctx, c, names, initialize)
	for _, ch := range changes {
		switch {
		case !ch.Changed:
			fmt.Fprintf(o.out, "storageclass/%s unchanged\n", ch.Name)
		case initialize:
			fmt.Fprintf(o.out, "storageclass/%s initialized for tenant clusters\n", ch.Name)
		default:
			fmt.Fprintf(o.out, "storageclass/%s no longer offered to tenant clusters\n", ch.Name)
		}
	}
	return err
}

// List prints the classes.
func (o *storageClassOptions) List(ctx context.Context) error {
	cfg, err := o.restConfig()
	if err != nil {
		return err
	}
	c, err := installer.NewClient(cfg)
	if err != nil {
		return err
	}
	classes, err := storageclass.List(ctx, c)
	if err != nil {
		return err
	}
	return storageclass.Write(o.out, classes)
}
