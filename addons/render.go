package addons

import (
	"bytes"
	"embed"
	"encoding/base64"
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

//go:embed kubevirt-csi/*.yaml
var files embed.FS

// KubeVirtCSI is the directory of the KubeVirt CSI driver's manifests.
const KubeVirtCSI = "kubevirt-csi"

// Params are the values the templates use.
type Params struct {
	// ClusterID is the tenant cluster's id.
	ClusterID string
	// InfraNamespace is the tenant's namespace on the infra cluster, where
	// the driver creates the DataVolumes.
	InfraNamespace string
	// InfraKubeconfig is the driver's kubeconfig of the infra cluster.
	InfraKubeconfig []byte
	// DriverImage is the image of the KubeVirt CSI driver.
	DriverImage string
	// RegistrarImage is the image of the CSI node-driver-registrar.
	RegistrarImage string
	// LivenessProbeImage is the image of the CSI liveness probe.
	LivenessProbeImage string
}

// Default images of the node plugin.
const (
	// DefaultDriverImage is the KubeVirt CSI driver image.
	DefaultDriverImage = "quay.io/kubevirt/kubevirt-csi-driver:v0.4.2"
	// DefaultRegistrarImage is the node-driver-registrar image.
	DefaultRegistrarImage = "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.13.0"
	// DefaultLivenessProbeImage is the CSI liveness probe image.
	DefaultLivenessProbeImage = "registry.k8s.io/sig-storage/livenessprobe:v2.15.0"
)

// withDefaults fills the empty images.
func (p Params) withDefaults() Params {
	if p.DriverImage == "" {
		p.DriverImage = DefaultDriverImage
	}
	if p.RegistrarImage == "" {
		p.RegistrarImage = DefaultRegistrarImage
	}
	if p.LivenessProbeImage == "" {
		p.LivenessProbeImage = DefaultLivenessProbeImage
	}
	return p
}

// Render renders every manifest of dir (for example KubeVirtCSI) with p and
// returns the objects in file order, each file's documents in order.
func Render(dir string, p Params) ([]*unstructured.Unstructured, error) {
	names, err := fs.Glob(files, path.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("failed to list the manifests of %s: %w", dir, err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no manifests in addon %q", dir)
	}
	sort.Strings(names)
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

// renderFile executes one template and decodes its YAML documents.
func renderFile(name string, p Params) ([]*unstructured.Unstructured, error) {
	tpl, err := template.New(path.Base(name)).Option("missingkey=error").Funcs(template.FuncMap{
		"b64": base64.StdEncoding.EncodeToString,
	}).ParseFS(files, name)
	if err != nil {
		return nil, fmt.Errorf("failed to parse manifest %s: %w", name, err)
	}
	var buf bytes.Buffer
	if err := tpl.Execute(&buf, p); err != nil {
		return nil, fmt.Errorf("failed to render manifest %s: %w", name, err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(&buf, 4096)
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
