package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/render"
)

type renderFlags struct {
	files           []string
	output          string
	namespace       string
	infraKubeconfig string
}

func newRenderCmd(in io.Reader, out, errOut io.Writer) *cobra.Command {
	var f renderFlags
	cmd := &cobra.Command{
		Use:   "render -f FILE [-o yaml|json] [--namespace NS] [--infra-kubeconfig PATH]",
		Short: "Print the VirtualMachine and Secret that one Machine of each input object would get",
		Long: `render reads Machines, MachineSets or MachineDeployments (multi-document YAML or JSON, Lists of them as
kubectl get -o yaml|json prints them; "-" reads stdin) and prints, for each, the objects that one Machine of it would get on the infra cluster: the VirtualMachine
(with its DataVolumeTemplates) first, then the cloud-init Secret with placeholder user data, then the SSH
Service when the spec sets virtualMachine.sshService. The Machine is
named after the input object. With --infra-kubeconfig, facts that live on the infra cluster (storage
profiles, instancetype kinds, zone usage) are looked up there, and the objects are submitted to it with
server-side dry-run, so that KubeVirt's and CDI's admission judge them and nothing is stored: a refusal
exits non-zero with the infra cluster's reason, its warnings go to stderr, and a dry-run create needs the
create permission. Without it no cluster is contacted, those facts take their defaults and a note on
stderr says that no verdict was asked.

An invalid spec exits non-zero with the message the controller would put on the Machine, and so does an
input without a single object. Warnings (converted or ignored input) go to stderr, so stdout stays parseable.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := &render.Options{
				Files:     f.files,
				Output:    f.output,
				Namespace: f.namespace,
				In:        in,
				Out:       out,
				ErrOut:    errOut,
			}
			if f.infraKubeconfig != "" {
				infra, err := newInfraFacts(cmd.Context(), f.infraKubeconfig, errOut)
				if err != nil {
					return err
				}
				defer infra.stop()
				opts.Facts, opts.Judge, opts.Getenv = infra.source, infra.judge, infra.getenv
			}
			return opts.Run(cmd.Context())
		},
	}
	cmd.Flags().StringArrayVarP(&f.files, "filename", "f", nil, `input file ("-" for stdin); repeatable`)
	cmd.Flags().StringVarP(&f.output, "output", "o", "yaml", "output format: yaml or json")
	cmd.Flags().StringVar(&f.namespace, "namespace", "", "infra namespace of the VMs (default: the spec's, else the kubeconfig's, else \"default\")")
	cmd.Flags().StringVar(&f.infraKubeconfig, "infra-kubeconfig", "", "kubeconfig of the infra cluster to look facts up on and to judge the objects with server-side dry-run (nothing is stored)")
	return cmd
}
