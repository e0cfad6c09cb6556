package storageclass

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kubevirt-kkp/kkp-kubevirt/addons"
)

const (
	// InitializeAnnotation on an infra StorageClass, set to "true", makes
	// it available in tenant clusters.
	InitializeAnnotation = "kubevirt-initialization.k8c.io/initialize-sc"
	// BusAnnotation on an infra StorageClass overrides the disk bus of the
	// tenant class (parameter bus).
	BusAnnotation = "kubevirt-initialization.k8c.io/bus"
	// ZonesAnnotation on an infra StorageClass, a comma-separated list,
	// replaces the zones taken from its allowedTopologies.
	ZonesAnnotation = "kubevirt-initialization.k8c.io/zones"
	// SnapshotClassAnnotation on an infra StorageClass names the infra
	// VolumeSnapshotClass of its tenant VolumeSnapshotClass (with
	// Options.Snapshots).
	SnapshotClassAnnotation = "kubevirt-initialization.k8c.io/volume-snapshot-class"
	// DefaultClassAnnotation marks the default StorageClass of a cluster.
	DefaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"
	// InfraClassLabel on a tenant class names the infra class it maps.
	InfraClassLabel = "kkp-kubevirt.io/infra-storage-class"
	// Provisioner is the KubeVirt CSI driver.
	Provisioner = "csi.kubevirt.io"
	// NamePrefix prefixes the infra class name in the tenant cluster.
	NamePrefix = "kubevirt-"
	// DefaultBus is the disk bus when neither the option nor the
	// annotation sets one.
	DefaultBus = "scsi"
)

// topologyKeys are the allowedTopologies keys that mean something in a
// tenant cluster; node-specific keys of the infra cluster do not.
var topologyKeys = map[string]bool{corev1.LabelTopologyZone: true, corev1.LabelTopologyRegion: true}

// Desired returns the tenant StorageClasses for the infra classes: one per
// class annotated for initialization and not being deleted, rendered from
// the manifest in addons/kubevirt-csi-storageclasses. o.Bus is the default
// disk bus (DefaultBus when empty); a tenant class allows volume expansion
// when its infra class does and o.DisableVolumeExpansion is false.
func Desired(infra []storagev1.StorageClass, o Options) ([]storagev1.StorageClass, error) {
	objs, err := render(infra, o)
	if err != nil {
		return nil, err
	}
	var out []storagev1.StorageClass
	for _, obj := range objs {
		if obj.GetKind() != "StorageClass" {
			continue
		}
		var sc storagev1.StorageClass
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, &sc, true); err != nil {
			return nil, fmt.Errorf("failed to convert the rendered StorageClass %s: %w", obj.GetName(), err)
		}
		// Typed objects go without TypeMeta, as the client reads them.
		sc.TypeMeta = metav1.TypeMeta{}
		out = append(out, sc)
	}
	return out, nil
}

// render renders the tenant classes of the initialized infra classes, and
// with o.Snapshots the VolumeSnapshotClasses of those that name an infra
// VolumeSnapshotClass in SnapshotClassAnnotation.
func render(infra []storagev1.StorageClass, o Options) ([]*unstructured.Unstructured, error) {
	bus := o.Bus
	if bus == "" {
		bus = DefaultBus
	}
	var params addons.Params
	for i := range infra {
		sc := &infra[i]
		if sc.Annotations[InitializeAnnotation] != "true" || !sc.DeletionTimestamp.IsZero() {
			continue
		}
		tc := tenantClass(sc, bus)
		tc.AllowVolumeExpansion = tc.AllowVolumeExpansion && !o.DisableVolumeExpansion
		if o.Snapshots {
			tc.InfraSnapshotClass = strings.TrimSpace(sc.Annotations[SnapshotClassAnnotation])
		}
		params.StorageClasses = append(params.StorageClasses, tc)
	}
	if len(params.StorageClasses) == 0 {
		return nil, nil
	}
	return addons.Render(addons.KubeVirtCSIStorageClasses, params)
}

// tenantClass returns the template values of the tenant class of an infra
// class.
func tenantClass(infra *storagev1.StorageClass, bus string) addons.StorageClass {
	if b := infra.Annotations[BusAnnotation]; b != "" {
		bus = b
	}
	binding := storagev1.VolumeBindingImmediate
	if infra.VolumeBindingMode != nil {
		binding = *infra.VolumeBindingMode
	}
	sc := addons.StorageClass{
		Name:              NamePrefix + infra.Name,
		InfraName:         infra.Name,
		Bus:               bus,
		Default:           infra.Annotations[DefaultClassAnnotation] == "true",
		VolumeBindingMode: string(binding),
		// The driver grows a volume by growing its infra claim.
		AllowVolumeExpansion: ptr.Deref(infra.AllowVolumeExpansion, false),
	}
	if t := topologies(infra); len(t) > 0 {
		sc.AllowedTopologies = t
	}
	return sc
}

// topologies keeps the zone and region requirements of the infra class,
// or a single zone term from ZonesAnnotation when it is set.
func topologies(infra *storagev1.StorageClass) []corev1.TopologySelectorTerm {
	if zones := splitList(infra.Annotations[ZonesAnnotation]); len(zones) > 0 {
		return []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
			{Key: corev1.LabelTopologyZone, Values: zones},
		}}}
	}
	var out []corev1.TopologySelectorTerm
	for _, term := range infra.AllowedTopologies {
		var kept []corev1.TopologySelectorLabelRequirement
		for _, req := range term.MatchLabelExpressions {
			if topologyKeys[req.Key] {
				kept = append(kept, *req.DeepCopy())
			}
		}
		if len(kept) > 0 {
			out = append(out, corev1.TopologySelectorTerm{MatchLabelExpressions: kept})
		}
	}
	return out
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// needsRecreate reports a difference in a field the API server does not
// let an update change.
func needsRecreate(have, want *storagev1.StorageClass) bool {
	return have.Provisioner != want.Provisioner ||
		!equality.Semantic.DeepEqual(emptyNil(have.Parameters), emptyNil(want.Parameters)) ||
		!equality.Semantic.DeepEqual(have.ReclaimPolicy, want.ReclaimPolicy) ||
		!equality.Semantic.DeepEqual(have.VolumeBindingMode, want.VolumeBindingMode) ||
		len(have.AllowedTopologies)+len(want.AllowedTopologies) > 0 &&
			!equality.Semantic.DeepEqual(have.AllowedTopologies, want.AllowedTopologies)
}

func emptyNil(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
