package main

import (
	"cmp"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/catalog"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/remote"

	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

type catalogFlags struct {
	infraKubeconfig string
	namespace       string
	output          string
}

func newCatalogCmd(out io.Writer) *cobra.Command {
	var f catalogFlags
	cmd := &cobra.Command{
		Use:   "catalog --infra-kubeconfig PATH [--namespace NS] [-o table|json|yaml]",
		Short: "List what a tenant's infra namespace offers MachineDeployments: flavors, instancetypes, storage classes, images, networks",
		Long: `catalog reads, and never writes, the infra cluster and lists the choices a MachineDeployment of the tenant
cluster has in its infra namespace, each with the providerSpec field that selects it: flavors
(VirtualMachineInstancePresets), instancetypes and preferences (namespaced and cluster-wide), storage classes
(default, binding mode, whether they are offered to tenant clusters), named images of the image cache and
NetworkAttachmentDefinitions. JSON and YAML output suit dashboards. A namespace that does not exist on the infra
cluster is an error naming the cluster-* namespaces there; an existing empty one lists "none".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reader, namespace, err := infraReader(f.infraKubeconfig)
			if err != nil {
				return err
			}
			return catalog.Options{Reader: reader, Namespace: cmp.Or(f.namespace, namespace), Format: f.output, Out: out}.Run(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&f.infraKubeconfig, "infra-kubeconfig", "", "kubeconfig of the infra cluster (required; read-only)")
	cmd.Flags().StringVar(&f.namespace, "namespace", "", `the tenant's infra namespace (default: the kubeconfig's, else "default")`)
	cmd.Flags().StringVarP(&f.output, "output", "o", "table", "output format: table, json or yaml")
	_ = cmd.MarkFlagRequired("infra-kubeconfig")
	return cmd
}

// catalogTimeout bounds every request of the catalog command.
const catalogTimeout = 30 * time.Second

// infraReader returns a client of the infra cluster of a kubeconfig file
// and the namespace of its current context ("default" when it has none).
func infraReader(path string) (ctrlruntimeclient.Reader, string, error) {
	raw, err := kubeconfig.ReadOperatorFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("--infra-kubeconfig: %w", err)
	}
	conn, err := remote.Dial(raw, remote.Options{
		UserAgent: "machine-controller-catalog", QPS: infra.DefaultQPS, Burst: infra.DefaultBurst, Timeout: catalogTimeout,
	})
	if err != nil {
		return nil, "", fmt.Errorf("--infra-kubeconfig: %w", err)
	}
	c, err := conn.NewClient(nil, nil)
	if err != nil {
		return nil, "", fmt.Errorf("failed to create the infra client: %w", err)
	}
	return c, conn.Namespace, nil
}
