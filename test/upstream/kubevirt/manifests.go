package main

import (
	"flag"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"kubevirt.io/kubevirt/pkg/virt-operator/resource/generate/components"
	vap "kubevirt.io/kubevirt/pkg/virt-operator/resource/generate/components/validatingadmissionpolicies"
	"kubevirt.io/kubevirt/pkg/virt-operator/resource/generate/rbac"
)

// crdFuncs are the CRDs of KubeVirt's install strategy, in its order, and the
// KubeVirt CRD that the operator's own manifests carry.
var crdFuncs = []func() (*extv1.CustomResourceDefinition, error){
	components.NewKubeVirtCrd,
	components.NewVirtualMachineInstanceCrd, components.NewPresetCrd, components.NewReplicaSetCrd,
	components.NewVirtualMachineCrd, components.NewVirtualMachineInstanceMigrationCrd,
	components.NewVirtualMachineSnapshotCrd, components.NewVirtualMachineSnapshotContentCrd,
	components.NewVirtualMachineRestoreCrd, components.NewVirtualMachineInstancetypeCrd,
	components.NewVirtualMachineClusterInstancetypeCrd, components.NewVirtualMachinePoolCrd,
	components.NewMigrationPolicyCrd, components.NewVirtualMachinePreferenceCrd,
	components.NewVirtualMachineClusterPreferenceCrd, components.NewVirtualMachineExportCrd,
	components.NewVirtualMachineCloneCrd, components.NewVirtualMachineBackupCrd,
	components.NewVirtualMachineBackupTrackerCrd, components.NewPluginCrd,
}

func runCRDs(args []string) error {
	fs := flag.NewFlagSet("crds", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	objs := make([]any, 0, len(crdFuncs))
	for _, f := range crdFuncs {
		crd, err := f()
		if err != nil {
			return fmt.Errorf("failed to generate a CRD: %w", err)
		}
		crd.APIVersion, crd.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
		objs = append(objs, crd)
	}
	return write(objs)
}

// operatorImages are the images virt-operator is told about; the flags name
// them like the chart's values.
type operatorImages struct {
	operator, api, controller, handler, launcher, exportProxy, exportServer,
	synchronizationController, templateAPIServer, templateController,
	libguestfsTools, prHelper, sidecarShim string
}

func (i *operatorImages) register(fs *flag.FlagSet) {
	for _, f := range []struct {
		p    *string
		name string
	}{
		{&i.operator, "operator"}, {&i.api, "api"}, {&i.controller, "controller"}, {&i.handler, "handler"},
		{&i.launcher, "launcher"}, {&i.exportProxy, "export-proxy"}, {&i.exportServer, "export-server"},
		{&i.synchronizationController, "synchronization-controller"},
		{&i.templateAPIServer, "template-apiserver"}, {&i.templateController, "template-controller"},
		{&i.libguestfsTools, "libguestfs-tools"}, {&i.prHelper, "pr-helper"}, {&i.sidecarShim, "sidecar-shim"},
	} {
		fs.StringVar(f.p, f.name+"-image", "", "the "+f.name+" image")
	}
}

func runOperator(args []string) error {
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	namespace := fs.String("namespace", "kubevirt", "the namespace virt-operator runs in")
	version := fs.String("version", "v1.9.0", "the KubeVirt version (KUBEVIRT_VERSION)")
	verbosity := fs.String("verbosity", "2", "virt-operator's log level")
	pullPolicy := fs.String("pull-policy", string(corev1.PullIfNotPresent), "the image pull policy")
	var images operatorImages
	images.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	objs := rbac.GetAllOperator(*namespace)
	deployment := components.NewOperatorDeployment(*namespace, "", "", *version, *verbosity, *version, "",
		images.api, images.controller, images.handler, images.launcher, images.exportProxy, images.exportServer,
		images.synchronizationController, images.templateAPIServer, images.templateController,
		images.libguestfsTools, images.prHelper, images.sidecarShim, images.operator, corev1.PullPolicy(*pullPolicy))
	return write(append(objs, deployment))
}

// componentRBAC are the RBAC generators of the components whose code runs in
// the tests, by the name -component takes.
var componentRBAC = map[string]func(namespace string) []runtime.Object{
	"api":     rbac.GetAllApiServer,
	"handler": rbac.GetAllHandler,
	"controller": func(namespace string) []runtime.Object {
		// The NetworkAttachmentDefinition rules are left out only when an
		// external component injects networks, which nothing here does.
		return rbac.GetAllController(namespace, true)
	},
}

func runRBAC(args []string) error {
	fs := flag.NewFlagSet("rbac", flag.ContinueOnError)
	namespace := fs.String("namespace", "kubevirt", "the namespace KubeVirt runs in")
	component := fs.String("component", "", "api (virt-api), controller (virt-controller) or handler (virt-handler)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	gen, ok := componentRBAC[*component]
	if !ok {
		return fmt.Errorf("unknown -component %q: want api, controller or handler", *component)
	}
	var objs []any
	for _, obj := range gen(*namespace) {
		objs = append(objs, obj)
	}
	return write(objs)
}

func runWebhookConfigurations(args []string) error {
	fs := flag.NewFlagSet("webhook-configurations", flag.ContinueOnError)
	namespace := fs.String("namespace", "kubevirt", "the namespace virt-api runs in")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return write([]any{
		components.NewVirtAPIMutatingWebhookConfiguration(*namespace),
		components.NewVirtAPIValidatingWebhookConfiguration(*namespace),
		components.NewVirtLauncherPodMutatingWebhookConfiguration(*namespace),
	})
}

func runAdmissionPolicies(args []string) error {
	fs := flag.NewFlagSet("admission-policies", flag.ContinueOnError)
	namespace := fs.String("namespace", "kubevirt", "the namespace KubeVirt runs in")
	if err := fs.Parse(args); err != nil {
		return err
	}
	// What virt-operator installs whatever the configuration: the node
	// restriction of virt-handler's writes to Nodes.
	handler := fmt.Sprintf("system:serviceaccount:%s:%s", *namespace, components.HandlerServiceAccountName)
	policy := vap.NewHandlerV1ValidatingAdmissionPolicy(handler)
	binding := vap.NewHandlerV1ValidatingAdmissionPolicyBinding()
	policy.APIVersion, policy.Kind = "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"
	binding.APIVersion, binding.Kind = "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"
	return write([]any{policy, binding})
}
