package addons

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"text/template"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

//go:embed kubevirt-csi/*.yaml kubevirt-csi-controller/*.yaml kubevirt-csi-storageclasses/*.yaml kubevirt-csi-snapshot-crds/*.yaml kubevirt-ccm/*.yaml
var files embed.FS

// Addon directories.
const (
	// KubeVirtCSI is the directory of the tenant-cluster side of the
	// KubeVirt CSI driver: the node plugin, applied to tenant clusters.
	KubeVirtCSI = "kubevirt-csi"
	// KubeVirtCSIController is the directory of the infra-cluster side of
	// the KubeVirt CSI driver: the controller, applied to the tenant
	// namespace on the infra cluster.
	KubeVirtCSIController = "kubevirt-csi-controller"
	// KubeVirtCSIStorageClasses is the directory of the tenant cluster's
	// StorageClasses, rendered from Params.StorageClasses.
	KubeVirtCSIStorageClasses = "kubevirt-csi-storageclasses"
	// KubeVirtCSISnapshotCRDs is the directory of the snapshot.storage.k8s.io
	// CRDs (VolumeSnapshot, VolumeSnapshotContent, VolumeSnapshotClass),
	// copied unchanged by make generate from external-snapshotter's client
	// module at the csi-snapshotter image's version. They are plain
	// manifests, read with Manifests, never rendered.
	KubeVirtCSISnapshotCRDs = "kubevirt-csi-snapshot-crds"
)

// Names and labels of the CSI controller's objects on the infra cluster.
const (
	// ControllerName names the CSI controller's Deployment.
	ControllerName = "kubevirt-csi-controller"
	// ControllerPodLabel is the label key that, with value ControllerName,
	// marks the CSI controller's pods (and selects them in its
	// Deployment and NetworkPolicy).
	ControllerPodLabel = "app.kubernetes.io/name"
	// ControllerServiceAccount is the infra ServiceAccount of the CSI
	// controller's pods (the componentaccess controller keeps it).
	ControllerServiceAccount = "kubevirt-csi"
	// LeaderElectionNamespace is the namespace of the tenant cluster where
	// the controller's sidecars keep their leader-election Leases; one
	// that every cluster has, so the controller does not depend on the
	// node plugin's addon.
	LeaderElectionNamespace = "kube-system"
)

// Params are the values the templates use. The node plugin (KubeVirtCSI)
// uses ClusterID, InfraNamespace, DriverImage, RegistrarImage and
// LivenessProbeImage; the controller (KubeVirtCSIController) needs every
// field except RegistrarImage and the CCM fields, and Render refuses it
// when a Secret name or key is empty. The cloud controller manager
// (KubeVirtCCM) uses ClusterID, InfraNamespace, the Secret fields,
// ConfigHash and the CCM fields.
type Params struct {
	// ClusterID is the tenant cluster's id.
	ClusterID string
	// InfraNamespace is the tenant's namespace on the infra cluster, where
	// the driver creates the DataVolumes.
	InfraNamespace string
	// InfraKubeconfigSecret names the Secret in InfraNamespace with the
	// controller's kubeconfig of the infra cluster.
	InfraKubeconfigSecret string
	// InfraKubeconfigKey is the key of the kubeconfig in that Secret.
	InfraKubeconfigKey string
	// TenantKubeconfigSecret names the Secret in InfraNamespace with the
	// tenant cluster's kubeconfig.
	TenantKubeconfigSecret string
	// TenantKubeconfigKey is the key of the kubeconfig in that Secret.
	TenantKubeconfigKey string
	// ConfigHash identifies the contents of both kubeconfigs; the
	// controller's pods carry it, so they restart when a kubeconfig
	// changes. Empty leaves the annotation empty.
	ConfigHash string
	// DriverImage is the image of the KubeVirt CSI driver.
	DriverImage string
	// RegistrarImage is the image of the CSI node-driver-registrar.
	RegistrarImage string
	// LivenessProbeImage is the image of the CSI liveness probe.
	LivenessProbeImage string
	// ProvisionerImage is the image of the CSI external-provisioner.
	ProvisionerImage string
	// AttacherImage is the image of the CSI external-attacher.
	AttacherImage string
	// ResizerImage is the image of the CSI external-resizer.
	ResizerImage string
	// DisableResizer leaves the external-resizer out of the controller.
	DisableResizer bool
	// Snapshots puts the external-snapshotter into the controller.
	Snapshots bool
	// SnapshotterImage is the image of the CSI external-snapshotter.
	SnapshotterImage string
	// StorageClassEnforcement, when set, is the driver's
	// INFRA_STORAGE_CLASS_ENFORCEMENT configuration (YAML).
	StorageClassEnforcement string
	// StorageClasses are the tenant StorageClasses (KubeVirtCSIStorageClasses).
	StorageClasses []StorageClass
	// CCMImage is the image of the KubeVirt cloud controller manager.
	CCMImage string
	// CCMLoadBalancer turns the CCM's load balancers on: Services of type
	// LoadBalancer in the tenant cluster get one in InfraNamespace.
	CCMLoadBalancer bool
	// CCMZoneAndRegion makes the CCM label tenant Nodes with the
	// topology region and zone of the infra node their VM runs on.
	CCMZoneAndRegion bool
	// CCMFeatureGates are passed to the CCM as --feature-gates; none when
	// empty.
	CCMFeatureGates FeatureGates
}

// StorageClass is one tenant StorageClass backed by an infra class.
type StorageClass struct {
	// Name is the tenant class's name.
	Name string
	// InfraName is the infra class the driver provisions from.
	InfraName string
	// Bus is the disk bus the volumes are hot-plugged with.
	Bus string
	// Default marks the tenant cluster's default class.
	Default bool
	// VolumeBindingMode is Immediate or WaitForFirstConsumer.
	VolumeBindingMode string
	// AllowedTopologies restricts the class to zones and regions; nil for
	// none. It is rendered as JSON.
	AllowedTopologies any
	// AllowVolumeExpansion lets the tenant's claims of the class grow.
	AllowVolumeExpansion bool
	// InfraSnapshotClass, when set, names the infra VolumeSnapshotClass
	// of a tenant VolumeSnapshotClass of the same name as the class.
	InfraSnapshotClass string
}

// Default images. The tags are pinned here and were not pulled by any test
// of this repository.
const (
	// DefaultDriverImage is the KubeVirt CSI driver image.
	DefaultDriverImage = "quay.io/kubevirt/kubevirt-csi-driver:v0.4.2"
	// DefaultRegistrarImage is the node-driver-registrar image.
	DefaultRegistrarImage = "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.13.0"
	// DefaultLivenessProbeImage is the CSI liveness probe image.
	DefaultLivenessProbeImage = "registry.k8s.io/sig-storage/livenessprobe:v2.15.0"
	// DefaultProvisionerImage is the CSI external-provisioner image.
	DefaultProvisionerImage = "registry.k8s.io/sig-storage/csi-provisioner:v5.2.0"
	// DefaultAttacherImage is the CSI external-attacher image.
	DefaultAttacherImage = "registry.k8s.io/sig-storage/csi-attacher:v4.8.1"
	// DefaultResizerImage is the CSI external-resizer image.
	DefaultResizerImage = "registry.k8s.io/sig-storage/csi-resizer:v1.13.2"
	// DefaultSnapshotterImage is the CSI external-snapshotter image.
	DefaultSnapshotterImage = "registry.k8s.io/sig-storage/csi-snapshotter:v8.2.0"
)

// withDefaults fills the empty images.
func (p Params) withDefaults() Params {
	for _, image := range []struct {
		field *string
		value string
	}{
		{&p.DriverImage, DefaultDriverImage},
		{&p.RegistrarImage, DefaultRegistrarImage},
		{&p.LivenessProbeImage, DefaultLivenessProbeImage},
		{&p.ProvisionerImage, DefaultProvisionerImage},
		{&p.AttacherImage, DefaultAttacherImage},
		{&p.ResizerImage, DefaultResizerImage},
		{&p.SnapshotterImage, DefaultSnapshotterImage},
		{&p.CCMImage, DefaultCCMImage},
	} {
		if *image.field == "" {
			*image.field = image.value
		}
	}
	return p
}

// Render renders every manifest of dir (for example KubeVirtCSI) with p and
// returns the objects in file order, each file's documents in order.
func Render(dir string, p Params) ([]*unstructured.Unstructured, error) {
	names, err := manifestNames(dir)
	if err != nil {
		return nil, err
	}
	p = p.withDefaults()
	var out []*unstructured.Unstructured
	for _, name := range names {
		objs, err := renderFile(name, p)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// Manifests decodes every manifest of dir as it is, without template
// processing (for KubeVirtCSISnapshotCRDs, copied from upstream), and
// returns the objects in file order, each file's documents in order.
func Manifests(dir string) ([]*unstructured.Unstructured, error) {
	names, err := manifestNames(dir)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, name := range names {
		f, err := files.Open(name)
		if err != nil {
			return nil, fmt.Errorf("failed to open manifest %s: %w", name, err)
		}
		objs, err := decode(name, f)
		_ = f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// manifestNames returns the sorted manifest files of dir.
func manifestNames(dir string) ([]string, error) {
	names, err := fs.Glob(files, path.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("failed to list the manifests of %s: %w", dir, err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no manifests in addon %q", dir)
	}
	sort.Strings(names)
	return names, nil
}

// renderFile executes one template and decodes its YAML documents.
func renderFile(name string, p Params) ([]*unstructured.Unstructured, error) {
	tpl, err := template.New(path.Base(name)).Option("missingkey=error").Funcs(template.FuncMap{
		"required": required,
		"toJSON":   toJSON,
	}).ParseFS(files, name)
	if err != nil {
		return nil, fmt.Errorf("failed to parse manifest %s: %w", name, err)
	}
	var buf bytes.Buffer
	if err := tpl.Execute(&buf, p); err != nil {
		return nil, fmt.Errorf("failed to render manifest %s: %w", name, err)
	}
	return decode(name, &buf)
}

// decode decodes the YAML documents of manifest name from r; every object
// must have a kind and a name.
func decode(name string, r io.Reader) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("failed to decode manifest %s: %w", name, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GetKind() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("manifest %s has an object without kind or name", name)
		}
		out = append(out, u)
	}
}

// toJSON encodes v as JSON, which is YAML too.
func toJSON(v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("failed to encode %T: %w", v, err)
	}
	return string(raw), nil
}

// required returns value, or an error naming field when value is empty.
func required(field, value string) (string, error) {
	if value == "" {
		return "", fmt.Errorf("%s must be set", field)
	}
	return value, nil
}
