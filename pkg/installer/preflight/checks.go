package preflight

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
)

// Labels and resources that show a node can run KVM guests.
const (
	nfdIntelVMX   = "feature.node.kubernetes.io/cpu-cpuid.VMX"
	nfdAMDSVM     = "feature.node.kubernetes.io/cpu-cpuid.SVM"
	kvmResource   = corev1.ResourceName("devices.kubevirt.io/kvm")
	defaultClass  = "storageclass.kubernetes.io/is-default-class"
	releaseName   = "meta.helm.sh/release-name"
	releaseNS     = "meta.helm.sh/release-namespace"
	podSecurityPS = "pod-security.kubernetes.io/enforce"
)

func kubernetesVersion(_ context.Context, cl Cluster, _ Options) ([]Finding, error) {
	const name = "kubernetes-version"
	info, err := cl.Discovery.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("failed to read the server version: %w", err)
	}
	v, err := semver.NewVersion(info.GitVersion)
	if err != nil {
		// A finding, not a failure of the check: the other checks still run.
		return []Finding{{name, Warning, fmt.Sprintf("cannot parse server version %q: %v", info.GitVersion, err)}}, nil
	}
	minor := semver.New(v.Major(), v.Minor(), 0, "", "")
	supported := fmt.Sprintf("supported: %s to %s", components.MinKubernetes, components.MaxTestedKubernetes)
	switch {
	case minor.LessThan(semver.MustParse(components.MinKubernetes)):
		return []Finding{{name, Error, fmt.Sprintf("%s is too old (%s)", info.GitVersion, supported)}}, nil
	case minor.GreaterThan(semver.MustParse(components.MaxTestedKubernetes)):
		return []Finding{{name, Warning, fmt.Sprintf("%s is newer than tested (%s)", info.GitVersion, supported)}}, nil
	}
	return []Finding{{name, OK, fmt.Sprintf("%s (%s)", info.GitVersion, supported)}}, nil
}

// kvmCapable reports whether a node shows KVM support.
func kvmCapable(node *corev1.Node, extra []string) bool {
	if q, ok := node.Status.Allocatable[kvmResource]; ok && !q.IsZero() {
		return true
	}
	if node.Labels[nfdIntelVMX] == "true" || node.Labels[nfdAMDSVM] == "true" {
		return true
	}
	for _, kv := range extra {
		key, value, _ := strings.Cut(kv, "=")
		if v, ok := node.Labels[key]; ok && v == value {
			return true
		}
	}
	return false
}

func kvmNodes(ctx context.Context, cl Cluster, opts Options) ([]Finding, error) {
	const name = "kvm"
	if !has(opts, "kubevirt") {
		return nil, nil
	}
	if opts.UseEmulation {
		return []Finding{{name, OK, "software emulation is on; nodes need no KVM (slow, for test clusters only)"}}, nil
	}
	nodes := &corev1.NodeList{}
	selector := labels.SelectorFromSet(opts.WorkloadNodeSelector)
	if err := cl.Client.List(ctx, nodes, ctrlruntimeclient.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, fmt.Errorf("failed to list nodes: %w", err)
	}
	switch {
	case len(nodes.Items) == 0 && selector.Empty():
		return []Finding{{name, Error, "the cluster has no nodes"}}, nil
	case len(nodes.Items) == 0:
		return []Finding{{name, Error, fmt.Sprintf("no node matches the workload placement %q", selector)}}, nil
	}
	var without []string
	for i := range nodes.Items {
		if !kvmCapable(&nodes.Items[i], opts.KVMNodeLabels) {
			without = append(without, nodes.Items[i].Name)
		}
	}
	sort.Strings(without)
	hint := fmt.Sprintf("KVM support is shown by the node labels %s=true or %s=true (Node Feature Discovery), a label given with --kvm-node-label, or allocatable %s",
		nfdIntelVMX, nfdAMDSVM, kvmResource)
	switch {
	case len(without) == len(nodes.Items):
		return []Finding{{name, Error, fmt.Sprintf("none of %d nodes shows KVM support; %s; use --use-emulation only for test clusters", len(without), hint)}}, nil
	case len(without) > 0:
		return []Finding{{name, Warning, fmt.Sprintf("%d of %d nodes show no KVM support and will not run VMs: %s", len(without), len(nodes.Items), list(without))}}, nil
	}
	return []Finding{{name, OK, fmt.Sprintf("all %d nodes show KVM support", len(nodes.Items))}}, nil
}

func storageClasses(ctx context.Context, cl Cluster, opts Options) ([]Finding, error) {
	const name = "storage-class"
	if !has(opts, "cdi") {
		return nil, nil
	}
	classes := &storagev1.StorageClassList{}
	if err := cl.Client.List(ctx, classes); err != nil {
		return nil, fmt.Errorf("failed to list StorageClasses: %w", err)
	}
	var defaults []string
	found := opts.ScratchSpaceStorageClass == ""
	for _, sc := range classes.Items {
		if sc.Annotations[defaultClass] == "true" {
			defaults = append(defaults, sc.Name)
		}
		found = found || sc.Name == opts.ScratchSpaceStorageClass
	}
	sort.Strings(defaults)
	var out []Finding
	if !found {
		out = append(out, Finding{name, Error, fmt.Sprintf("scratch space StorageClass %q does not exist", opts.ScratchSpaceStorageClass)})
	}
	switch len(defaults) {
	case 0:
		out = append(out, Finding{name, Warning, "no default StorageClass: DataVolumes without a storageClassName will not bind, and CDI has no scratch space unless scratchSpaceStorageClass is set"})
	case 1:
		out = append(out, Finding{name, OK, "default StorageClass " + defaults[0]})
	default:
		out = append(out, Finding{name, Warning, "more than one default StorageClass: " + list(defaults)})
	}
	return out, nil
}

// ownedBy reports whether obj carries the Helm annotations of release r.
func ownedBy(obj metav1.Object, r components.Release) bool {
	a := obj.GetAnnotations()
	return a[releaseName] == r.Name && a[releaseNS] == r.Namespace
}

func foreignInstallations(ctx context.Context, cl Cluster, opts Options) ([]Finding, error) {
	const name = "existing-installation"
	var out []Finding
	for _, r := range opts.Releases {
		rel, err := cl.Releases.Last(r.Name, r.Namespace)
		if err != nil {
			return nil, err
		}
		if rel != nil && (rel.Chart == nil || rel.Chart.Metadata == nil || rel.Chart.Metadata.Annotations[components.ChartAnnotation] != r.Name) {
			out = append(out, Finding{name, Error, fmt.Sprintf("Helm release %s/%s was not installed by kubevirt-installer; uninstall it or skip %s", r.Namespace, r.Name, r.Name)})
		}
		found, err := foreignObjects(ctx, cl.Client, r)
		if err != nil {
			return nil, err
		}
		for _, f := range found {
			out = append(out, Finding{name, Error, fmt.Sprintf("%s was not installed by kubevirt-installer; remove that installation first or skip %s", f, r.Name)})
		}
	}
	if len(out) == 0 {
		out = append(out, Finding{name, OK, "no KubeVirt, CDI or release of the same name installed by other means"})
	}
	return out, nil
}

// foreignObjects lists r's operator resources and operator Deployments that
// do not belong to r's release.
func foreignObjects(ctx context.Context, c ctrlruntimeclient.Reader, r components.Release) ([]string, error) {
	var out []string
	if r.Resource != nil {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(r.Resource.GroupVersion().WithKind(r.Resource.Kind + "List"))
		err := c.List(ctx, list)
		if err != nil && !meta.IsNoMatchError(err) && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("failed to list %s resources: %w", r.Resource.Kind, err)
		}
		for i := range list.Items {
			if !ownedBy(&list.Items[i], r) {
				out = append(out, r.Resource.Kind+" "+qualified(&list.Items[i]))
			}
		}
	}
	if r.Operator != "" {
		deps := &metav1.PartialObjectMetadataList{}
		deps.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("DeploymentList"))
		if err := c.List(ctx, deps); err != nil {
			return nil, fmt.Errorf("failed to list Deployments: %w", err)
		}
		for i := range deps.Items {
			if deps.Items[i].Name == r.Operator && !ownedBy(&deps.Items[i], r) {
				out = append(out, "Deployment "+qualified(&deps.Items[i]))
			}
		}
	}
	return out, nil
}

func qualified(obj metav1.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

func podSecurity(ctx context.Context, cl Cluster, opts Options) ([]Finding, error) {
	const name = "pod-security"
	var out []Finding
	for _, r := range opts.Releases {
		if r.ManagedNamespace || r.PodSecurity != components.PodSecurityPrivileged {
			continue
		}
		ns := &corev1.Namespace{}
		if err := cl.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Name: r.Namespace}, ns); err != nil {
			return nil, fmt.Errorf("failed to get namespace %s: %w", r.Namespace, err)
		}
		if level := ns.Labels[podSecurityPS]; level != "" && level != components.PodSecurityPrivileged {
			out = append(out, Finding{name, Error, fmt.Sprintf("namespace %s enforces pod security %q; %s needs privileged pods", r.Namespace, level, r.Name)})
		}
	}
	if len(out) == 0 {
		out = append(out, Finding{name, OK, "every component's namespace admits its pods"})
	}
	return out, nil
}
