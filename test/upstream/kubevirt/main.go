// Command kubevirt-upstream runs KubeVirt v1.9.0's own code for this
// project's tests, so that what the project produces is judged by KubeVirt
// rather than by a model of it:
//
//	kubevirt-upstream crds                    the CRDs of KubeVirt's install strategy and the KubeVirt CRD
//	kubevirt-upstream operator -namespace NS  virt-operator's ServiceAccount, RBAC and Deployment
//	kubevirt-upstream rbac -component api|controller|handler -namespace NS
//	                                          a component's ServiceAccount, roles and bindings
//	kubevirt-upstream webhook-configurations -namespace NS
//	                                          virt-api's admission webhook configurations
//	kubevirt-upstream admission-policies -namespace NS
//	                                          the admission policies virt-operator installs
//	kubevirt-upstream webhooks -kubeconfig F -namespace NS -listen ADDR -tls-cert F -tls-key F
//	                                          serves virt-api's admission webhooks, and on
//	                                          /datavolumes the DataVolumes virt-controller makes of a VM
//
// Generators print a JSON List.
package main

import (
	"fmt"
	"os"
)

type command struct {
	run     func(args []string) error
	summary string
}

var commands = map[string]command{
	"crds":                   {runCRDs, "print the KubeVirt CRDs"},
	"operator":               {runOperator, "print virt-operator's ServiceAccount, RBAC and Deployment"},
	"rbac":                   {runRBAC, "print virt-api's, virt-controller's or virt-handler's ServiceAccount, roles and bindings"},
	"webhook-configurations": {runWebhookConfigurations, "print virt-api's admission webhook configurations"},
	"admission-policies":     {runAdmissionPolicies, "print the admission policies virt-operator installs (virt-handler's node restriction)"},
	"webhooks":               {runWebhooks, "serve virt-api's admission webhooks"},
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	cmd, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "kubevirt-upstream: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	if err := cmd.run(os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "kubevirt-upstream %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: kubevirt-upstream <command> [flags]; commands:")
	for _, name := range []string{"crds", "operator", "rbac", "webhook-configurations", "admission-policies", "webhooks"} {
		fmt.Fprintf(os.Stderr, "  %-24s %s\n", name, commands[name].summary)
	}
}
