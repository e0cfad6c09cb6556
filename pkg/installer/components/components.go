package components

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Pod security levels a component needs in its namespace.
const (
	PodSecurityPrivileged = "privileged"
	PodSecurityBaseline   = "baseline"
	PodSecurityRestricted = "restricted"
)

// Supported Kubernetes versions of the pinned component set.
const (
	// MinKubernetes is the oldest Kubernetes minor the pinned KubeVirt
	// release supports.
	MinKubernetes = "1.31"
	// MaxTestedKubernetes is the newest Kubernetes minor the installer was
	// tested with.
	MaxTestedKubernetes = "1.36"
)

// Component is one installable part of the stack.
type Component struct {
	// Name names the component and its Helm release.
	Name string
	// Chart is the chart's directory in the charts package.
	Chart string
	// Version is the pinned version of the software; it equals the chart's
	// appVersion.
	Version string
	// Namespace is the release namespace.
	Namespace string
	// ManagedNamespace is true when the installer creates the namespace and
	// deletes it on uninstall; false for shared namespaces like kube-system.
	ManagedNamespace bool
	// PodSecurity is the pod security level the component's pods need.
	PodSecurity string
	// Operator is the name of the component's operator Deployment, empty
	// for components without an operator.
	Operator string
	// Resource is the custom resource the component's operator reconciles,
	// nil for components without an operator.
	Resource *Resource
	// Leftovers are cluster-scoped objects the operator normally removes
	// when its resource is deleted; an uninstall deletes those that remain,
	// because a dangling webhook or APIService breaks the API server.
	Leftovers []Object
}

// Resource describes an operator's custom resource.
type Resource struct {
	// GroupVersionKind is the resource's kind.
	schema.GroupVersionKind
	// Namespaced is true for namespaced kinds.
	Namespaced bool
	// ObservedVersion is the status field path holding the version the
	// operator has rolled out.
	ObservedVersion []string
}

// Object names a cluster-scoped object.
type Object struct {
	// GroupVersionKind is the object's kind.
	schema.GroupVersionKind
	// Name is the object's name.
	Name string
}

var (
	validatingWebhook = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingWebhookConfiguration"}
	mutatingWebhook   = schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "MutatingWebhookConfiguration"}
	apiService        = schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}
)

// Default returns the pinned components in dependency order: the CNI plugins
// before Multus, which delegates to them, KubeVirt before CDI, and our own
// controllers, which use the APIs of both, last.
func Default() []Component {
	return []Component{
		{
			Name: "cni-plugins", Chart: "cni-plugins", Version: "v1.9.0",
			Namespace: "kube-system", PodSecurity: PodSecurityPrivileged,
		},
		{
			Name: "multus", Chart: "multus", Version: "v4.3.0",
			Namespace: "kube-system", PodSecurity: PodSecurityPrivileged,
		},
		{
			Name: "kubevirt", Chart: "kubevirt", Version: "v1.9.0",
			Namespace: "kubevirt", ManagedNamespace: true, PodSecurity: PodSecurityPrivileged,
			Operator: "virt-operator",
			Resource: &Resource{
				GroupVersionKind: schema.GroupVersionKind{Group: "kubevirt.io", Version: "v1", Kind: "KubeVirt"},
				Namespaced:       true,
				ObservedVersion:  []string{"status", "observedKubeVirtVersion"},
			},
			Leftovers: []Object{
				{GroupVersionKind: apiService, Name: "v1.subresources.kubevirt.io"},
				{GroupVersionKind: apiService, Name: "v1alpha3.subresources.kubevirt.io"},
				{GroupVersionKind: mutatingWebhook, Name: "virt-api-mutator"},
				{GroupVersionKind: validatingWebhook, Name: "virt-api-validator"},
				{GroupVersionKind: validatingWebhook, Name: "virt-operator-validator"},
			},
		},
		{
			Name: "cdi", Chart: "cdi", Version: "v1.65.0",
			Namespace: "cdi", ManagedNamespace: true, PodSecurity: PodSecurityBaseline,
			Operator: "cdi-operator",
			Resource: &Resource{
				GroupVersionKind: schema.GroupVersionKind{Group: "cdi.kubevirt.io", Version: "v1beta1", Kind: "CDI"},
				ObservedVersion:  []string{"status", "observedVersion"},
			},
			Leftovers: []Object{
				{GroupVersionKind: apiService, Name: "v1beta1.upload.cdi.kubevirt.io"},
				{GroupVersionKind: mutatingWebhook, Name: "cdi-api-datavolume-mutate"},
				{GroupVersionKind: mutatingWebhook, Name: "cdi-api-pvc-mutate"},
				{GroupVersionKind: validatingWebhook, Name: "cdi-api-datavolume-validate"},
				{GroupVersionKind: validatingWebhook, Name: "cdi-api-dataimportcron-validate"},
				{GroupVersionKind: validatingWebhook, Name: "cdi-api-populator-validate"},
				{GroupVersionKind: validatingWebhook, Name: "cdi-api-validate"},
				{GroupVersionKind: validatingWebhook, Name: "objecttransfer-api-validate"},
			},
		},
		{
			Name: "infra-controller", Chart: "infra-controller", Version: "v0.1.0",
			Namespace: "kubevirt-kkp-infra", ManagedNamespace: true, PodSecurity: PodSecurityRestricted,
		},
		{
			Name: "machine-controller", Chart: "machine-controller", Version: "v0.1.0",
			Namespace: "kubevirt-kkp-machines", ManagedNamespace: true, PodSecurity: PodSecurityRestricted,
		},
	}
}

// Names returns the names of cs in order.
func Names(cs []Component) []string {
	names := make([]string, 0, len(cs))
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return names
}

// Without returns cs without the named components, keeping the order. Every
// name must be a component of cs.
func Without(cs []Component, skip []string) ([]Component, error) {
	known := Names(cs)
	for _, s := range skip {
		if !slices.Contains(known, s) {
			return nil, fmt.Errorf("unknown component %q (known: %v)", s, known)
		}
	}
	out := make([]Component, 0, len(cs))
	for _, c := range cs {
		if !slices.Contains(skip, c.Name) {
			out = append(out, c)
		}
	}
	return out, nil
}
