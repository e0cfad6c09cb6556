package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/helm"
)

// templateOptions are the options of template.
type templateOptions struct {
	*globalOptions
	values      valueFlags
	relocation  relocationFlags
	kubeVersion string
}

func newTemplateCommand(g *globalOptions) *cobra.Command {
	o := &templateOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "template",
		Short: "Print every manifest of the installation, for GitOps",
		Long: `template prints, without contacting a cluster, every object the installation
creates: the namespaces with their pod security labels, then each
component's CRDs and chart objects in dependency order. It takes the same
value flags as install.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.Run(cmd.Context()) },
	}
	o.values.bind(cmd.Flags())
	o.relocation.bind(cmd.Flags(), false)
	cmd.Flags().StringVar(&o.kubeVersion, "kube-version", "v"+components.MaxTestedKubernetes+".0", "Kubernetes version to render for")
	return cmd
}

// Run prints the manifests: all of them, or on any error nothing.
func (o *templateOptions) Run(_ context.Context) error {
	var versionErr error
	if err := helm.CheckKubeVersion(o.kubeVersion); err != nil {
		versionErr = fmt.Errorf("--kube-version: %w", err)
	}
	cfg, releases, err := o.plan(&o.values, &o.relocation, versionErr)
	if err != nil {
		return err
	}
	return installer.Template(o.out, releases, cfg.Values, o.kubeVersion)
}
