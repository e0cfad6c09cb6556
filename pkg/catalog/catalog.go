package catalog

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/imagecache"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// InitializeAnnotation marks an infra StorageClass that the infra-controller
// offers tenant clusters (as StorageClass kubevirt-<name> there).
const InitializeAnnotation = "kubevirt-initialization.k8c.io/initialize-sc"

// Catalog is what one infra namespace offers.
type Catalog struct {
	Namespace      string         `json:"namespace"`
	Flavors        []Flavor       `json:"flavors"`
	Instancetypes  []Instancetype `json:"instancetypes"`
	Preferences    []Preference   `json:"preferences"`
	StorageClasses []StorageClass `json:"storageClasses"`
	Images         []Image        `json:"images"`
	Networks       []Network      `json:"networks"`
	// NotServed names the kinds the infra cluster does not serve (their
	// operator is not installed); their lists are empty.
	NotServed []string `json:"notServed,omitempty"`
}

// Flavor is a VirtualMachineInstancePreset (virtualMachine.flavor.name).
type Flavor struct {
	Name   string `json:"name"`
	CPUs   string `json:"cpus,omitempty"`
	Memory string `json:"memory,omitempty"`
}

// Instancetype is a namespaced or cluster-wide instancetype
// (virtualMachine.instancetype).
type Instancetype struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	CPUs   int64  `json:"cpus,omitempty"`
	Memory string `json:"memory,omitempty"`
}

// Preference is a namespaced or cluster-wide preference
// (virtualMachine.preference).
type Preference struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// StorageClass is an infra StorageClass (primaryDisk.storageClassName).
type StorageClass struct {
	Name                 string `json:"name"`
	Provisioner          string `json:"provisioner"`
	Default              bool   `json:"default,omitempty"`
	VolumeBindingMode    string `json:"volumeBindingMode,omitempty"`
	AllowVolumeExpansion bool   `json:"allowVolumeExpansion,omitempty"`
	// OfferedToTenants: the class carries InitializeAnnotation.
	OfferedToTenants bool `json:"offeredToTenants,omitempty"`
}

// Image is a named image of the namespace's image cache
// (primaryDisk: {source: pvc, osImage: <osImage>}).
type Image struct {
	Name    string `json:"name"`
	OSImage string `json:"osImage"`
	URL     string `json:"url,omitempty"`
	Phase   string `json:"phase,omitempty"`
}

// Network is a NetworkAttachmentDefinition of the namespace
// (virtualMachine.networks[].name).
type Network struct {
	Name string `json:"name"`
}

// Kinds read from the infra cluster.
var (
	presetGVK          = schema.GroupVersionKind{Group: "kubevirt.io", Version: "v1", Kind: "VirtualMachineInstancePreset"}
	instancetypeGVKs   = kinds("VirtualMachineInstancetype", "VirtualMachineClusterInstancetype")
	preferenceGVKs     = kinds("VirtualMachinePreference", "VirtualMachineClusterPreference")
	dataVolumeGVK      = schema.GroupVersionKind{Group: "cdi.kubevirt.io", Version: "v1beta1", Kind: "DataVolume"}
	networkGVK         = schema.GroupVersionKind{Group: "k8s.cni.cncf.io", Version: "v1", Kind: "NetworkAttachmentDefinition"}
	clusterScopedKinds = []string{"VirtualMachineClusterInstancetype", "VirtualMachineClusterPreference"}
)

func kinds(names ...string) []schema.GroupVersionKind {
	out := make([]schema.GroupVersionKind, 0, len(names))
	for _, n := range names {
		out = append(out, schema.GroupVersionKind{Group: "instancetype.kubevirt.io", Version: "v1beta1", Kind: n})
	}
	return out
}

// List reads the catalog of namespace through c. A namespace that does not
// exist is an error naming it; an existing one without any of the kinds
// gives empty lists.
func List(ctx context.Context, c ctrlruntimeclient.Reader, namespace string) (*Catalog, error) {
	if err := checkNamespace(ctx, c, namespace); err != nil {
		return nil, err
	}
	out := &Catalog{Namespace: namespace}
	steps := []func(context.Context, ctrlruntimeclient.Reader, *Catalog) error{
		flavors, instancetypes, preferences, storageClasses, images, networks,
	}
	for _, step := range steps {
		if err := step(ctx, c, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// list lists one kind in the catalog's namespace (all of it for cluster
// kinds), sorted by name; a kind the cluster does not serve is recorded
// in NotServed and gives no items.
func list(ctx context.Context, c ctrlruntimeclient.Reader, cat *Catalog, gvk schema.GroupVersionKind) ([]unstructured.Unstructured, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	var opts []ctrlruntimeclient.ListOption
	if !slices.Contains(clusterScopedKinds, gvk.Kind) {
		opts = append(opts, ctrlruntimeclient.InNamespace(cat.Namespace))
	}
	if err := c.List(ctx, l, opts...); err != nil {
		if meta.IsNoMatchError(err) {
			cat.NotServed = append(cat.NotServed, gvk.GroupKind().String())
			return nil, nil
		}
		return nil, fmt.Errorf("failed to list %s: %w", gvk.Kind, err)
	}
	slices.SortFunc(l.Items, func(a, b unstructured.Unstructured) int { return strings.Compare(a.GetName(), b.GetName()) })
	return l.Items, nil
}

func flavors(ctx context.Context, c ctrlruntimeclient.Reader, cat *Catalog) error {
	items, err := list(ctx, c, cat, presetGVK)
	for _, p := range items {
		cpu, _, _ := unstructured.NestedString(p.Object, "spec", "domain", "resources", "requests", "cpu")
		memory, _, _ := unstructured.NestedString(p.Object, "spec", "domain", "resources", "requests", "memory")
		cat.Flavors = append(cat.Flavors, Flavor{Name: p.GetName(), CPUs: cpu, Memory: memory})
	}
	return err
}

func instancetypes(ctx context.Context, c ctrlruntimeclient.Reader, cat *Catalog) error {
	for _, gvk := range instancetypeGVKs {
		items, err := list(ctx, c, cat, gvk)
		if err != nil {
			return err
		}
		for _, it := range items {
			cpus, _, _ := unstructured.NestedInt64(it.Object, "spec", "cpu", "guest")
			memory, _, _ := unstructured.NestedString(it.Object, "spec", "memory", "guest")
			cat.Instancetypes = append(cat.Instancetypes, Instancetype{Name: it.GetName(), Kind: gvk.Kind, CPUs: cpus, Memory: memory})
		}
	}
	return nil
}

func preferences(ctx context.Context, c ctrlruntimeclient.Reader, cat *Catalog) error {
	for _, gvk := range preferenceGVKs {
		items, err := list(ctx, c, cat, gvk)
		if err != nil {
			return err
		}
		for _, p := range items {
			cat.Preferences = append(cat.Preferences, Preference{Name: p.GetName(), Kind: gvk.Kind})
		}
	}
	return nil
}

func storageClasses(ctx context.Context, c ctrlruntimeclient.Reader, cat *Catalog) error {
	l := &storagev1.StorageClassList{}
	if err := c.List(ctx, l); err != nil {
		return fmt.Errorf("failed to list StorageClasses: %w", err)
	}
	slices.SortFunc(l.Items, func(a, b storagev1.StorageClass) int { return strings.Compare(a.Name, b.Name) })
	for _, sc := range l.Items {
		out := StorageClass{
			Name:             sc.Name,
			Provisioner:      sc.Provisioner,
			Default:          isDefault(sc.Annotations),
			OfferedToTenants: strings.EqualFold(sc.Annotations[InitializeAnnotation], "true"),
		}
		if sc.VolumeBindingMode != nil {
			out.VolumeBindingMode = string(*sc.VolumeBindingMode)
		}
		if sc.AllowVolumeExpansion != nil {
			out.AllowVolumeExpansion = *sc.AllowVolumeExpansion
		}
		cat.StorageClasses = append(cat.StorageClasses, out)
	}
	return nil
}

// isDefault reports a default-class annotation set to true.
func isDefault(annotations map[string]string) bool {
	return strings.EqualFold(annotations["storageclass.kubernetes.io/is-default-class"], "true") ||
		strings.EqualFold(annotations["storageclass.beta.kubernetes.io/is-default-class"], "true")
}

func images(ctx context.Context, c ctrlruntimeclient.Reader, cat *Catalog) error {
	items, err := list(ctx, c, cat, dataVolumeGVK)
	for _, dv := range items {
		if dv.GetLabels()[imagecache.Label] != imagecache.KindNamed {
			continue
		}
		phase, _, _ := unstructured.NestedString(dv.Object, "status", "phase")
		cat.Images = append(cat.Images, Image{
			Name:    strings.TrimPrefix(dv.GetName(), imagecache.NamedDataVolumeName("")),
			OSImage: dv.GetName(),
			URL:     dv.GetAnnotations()[imagecache.URLAnnotation],
			Phase:   phase,
		})
	}
	return err
}

func networks(ctx context.Context, c ctrlruntimeclient.Reader, cat *Catalog) error {
	items, err := list(ctx, c, cat, networkGVK)
	for _, n := range items {
		cat.Networks = append(cat.Networks, Network{Name: n.GetName()})
	}
	return err
}
