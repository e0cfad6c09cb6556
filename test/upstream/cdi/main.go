// Command cdi-upstream prints what CDI v1.65.0's own generators produce, for
// this project's tests and charts:
//
//	cdi-upstream crds                     the CDI CRDs (DataVolume, StorageProfile, ...) and the CDI operator's CRD
//	cdi-upstream operator -namespace NS   cdi-operator's ServiceAccount, RBAC and Deployment
//	cdi-upstream controller-rbac -namespace NS
//	                                      cdi-controller's ServiceAccount, roles and bindings
//	cdi-upstream apiserver-rbac -namespace NS
//	                                      cdi-apiserver's ServiceAccount, roles and bindings
//	cdi-upstream webhook-configurations -namespace NS
//	                                      the webhook configurations cdi-operator writes for cdi-apiserver
//
// Each prints a JSON List. A last command serves, not prints:
//
//	cdi-upstream webhooks -kubeconfig F -tls-cert F -tls-key F [-namespace NS] [-listen ADDR]
//	                                      cdi-apiserver's admission webhooks (see runWebhooks)
package main

import (
	"flag"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cdicluster "kubevirt.io/containerized-data-importer/pkg/operator/resources/cluster"
	cdinamespaced "kubevirt.io/containerized-data-importer/pkg/operator/resources/namespaced"
	cdioperator "kubevirt.io/containerized-data-importer/pkg/operator/resources/operator"
)

type command struct {
	run     func(args []string) error
	summary string
}

var commands = map[string]command{
	"crds":            {runCRDs, "print the CDI CRDs and the CDI operator's CRD"},
	"operator":        {runOperator, "print cdi-operator's ServiceAccount, RBAC and Deployment"},
	"controller-rbac": {rbacCommand("controller-rbac", "controller"), "print cdi-controller's ServiceAccount, roles and bindings"},
	"apiserver-rbac":  {rbacCommand("apiserver-rbac", "apiserver"), "print cdi-apiserver's ServiceAccount, roles and bindings"},
	"webhook-configurations": {runWebhookConfigurations,
		"print the webhook configurations cdi-operator writes for cdi-apiserver"},
	"webhooks": {runWebhooks, "serve cdi-apiserver's admission webhooks with CDI's own handlers"},
}

var commandOrder = []string{"crds", "operator", "controller-rbac", "apiserver-rbac", "webhook-configurations", "webhooks"}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	cmd, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "cdi-upstream: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if err := cmd.run(os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "cdi-upstream %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: cdi-upstream <command> [flags]; commands:")
	for _, name := range commandOrder {
		fmt.Fprintf(os.Stderr, "  %-23s %s\n", name, commands[name].summary)
	}
}

func runCRDs(args []string) error {
	fs := flag.NewFlagSet("crds", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	crds, err := cdicluster.CreateStaticResourceGroup("crd-resources", &cdicluster.FactoryArgs{})
	if err != nil {
		return fmt.Errorf("failed to generate the CRDs: %w", err)
	}
	operatorCRD, err := cdioperator.CreateOperatorResourceGroup("operator-crd", &cdioperator.FactoryArgs{})
	if err != nil {
		return fmt.Errorf("failed to generate the operator's CRD: %w", err)
	}
	return write(objects(append(operatorCRD, crds...)))
}

// images are the images cdi-operator is told about; the flags name them like
// the chart's values.
type images struct {
	operator, controller, importer, cloner, apiserver, uploadProxy, uploadServer, ovirtPopulator string
}

func (i *images) register(fs *flag.FlagSet) {
	for _, f := range []struct {
		p    *string
		name string
	}{
		{&i.operator, "operator"}, {&i.controller, "controller"}, {&i.importer, "importer"}, {&i.cloner, "cloner"},
		{&i.apiserver, "apiserver"}, {&i.uploadProxy, "upload-proxy"}, {&i.uploadServer, "upload-server"},
		{&i.ovirtPopulator, "ovirt-populator"},
	} {
		fs.StringVar(f.p, f.name+"-image", "", "the "+f.name+" image")
	}
}

func runOperator(args []string) error {
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	namespace := fs.String("namespace", "cdi", "the namespace cdi-operator runs in")
	version := fs.String("version", "v1.65.0", "the CDI version (OPERATOR_VERSION)")
	verbosity := fs.String("verbosity", "1", "the log level of the operator and the CDI components")
	pullPolicy := fs.String("pull-policy", string(corev1.PullIfNotPresent), "the image pull policy")
	var img images
	img.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	objs, err := cdioperator.CreateOperatorResourceGroup("everything", &cdioperator.FactoryArgs{
		NamespacedArgs: cdinamespaced.FactoryArgs{
			Verbosity: *verbosity, OperatorVersion: *version, DeployClusterResources: "true",
			ControllerImage: img.controller, ImporterImage: img.importer, ClonerImage: img.cloner,
			OvirtPopulatorImage: img.ovirtPopulator, APIServerImage: img.apiserver,
			UploadProxyImage: img.uploadProxy, UploadServerImage: img.uploadServer,
			PullPolicy: *pullPolicy, Namespace: *namespace,
		},
		Image: img.operator,
	})
	if err != nil {
		return fmt.Errorf("failed to generate the operator's resources: %w", err)
	}
	// The operator's own CRD is printed by crds.
	var kept []client.Object
	for _, obj := range objs {
		if obj.GetObjectKind().GroupVersionKind().Kind != "CustomResourceDefinition" {
			kept = append(kept, obj)
		}
	}
	return write(objects(kept))
}

// rbacCommand prints the ServiceAccount, roles and bindings of one CDI
// component: CDI's cluster resource group and namespaced resource group of
// that component (group names as cdi-operator's factories call them).
func rbacCommand(clusterGroup, namespacedGroup string) func(args []string) error {
	return func(args []string) error {
		fs := flag.NewFlagSet(clusterGroup, flag.ContinueOnError)
		namespace := fs.String("namespace", "cdi", "the namespace the component runs in")
		if err := fs.Parse(args); err != nil {
			return err
		}
		cluster, err := cdicluster.CreateStaticResourceGroup(clusterGroup, &cdicluster.FactoryArgs{Namespace: *namespace})
		if err != nil {
			return fmt.Errorf("failed to generate the cluster RBAC of %s: %w", namespacedGroup, err)
		}
		namespaced, err := cdinamespaced.CreateResourceGroup(namespacedGroup, &cdinamespaced.FactoryArgs{Namespace: *namespace})
		if err != nil {
			return fmt.Errorf("failed to generate the namespaced resources of %s: %w", namespacedGroup, err)
		}
		var kept []client.Object
		for _, obj := range append(cluster, namespaced...) {
			switch obj.(type) {
			case *corev1.ServiceAccount, *rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding, *rbacv1.Role, *rbacv1.RoleBinding:
				kept = append(kept, obj)
			}
		}
		return write(objects(kept))
	}
}

func objects(objs []client.Object) []any {
	out := make([]any, len(objs))
	for i, obj := range objs {
		out[i] = obj
	}
	return out
}
