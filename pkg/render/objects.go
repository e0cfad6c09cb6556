package render

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// source is one input object reduced to what a Machine of it would carry.
type source struct {
	// ref names the input object for messages, e.g. "MachineDeployment kube-system/md-1".
	ref          string
	machine      vm.MachineInfo
	providerSpec []byte
}

// readSources decodes every YAML or JSON document of r into sources.
func readSources(r io.Reader, name string) ([]source, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bufio.NewReader(r), 4096)
	var out []source
	for i := 0; ; i++ {
		var raw map[string]any
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: document %d: %w", name, i+1, err)
		}
		if len(raw) == 0 {
			continue
		}
		doc, err := yaml.Marshal(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i+1, err)
		}
		src, err := decodeSource(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i+1, err)
		}
		out = append(out, src)
	}
}

func decodeSource(doc []byte) (source, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return source{}, err
	}
	switch tm.Kind {
	case "Machine", "MachineSet", "MachineDeployment":
		if tm.APIVersion != clusterv1alpha1.SchemeGroupVersion.String() {
			return source{}, fmt.Errorf("apiVersion %q of %s is not supported: use %s", tm.APIVersion, tm.Kind, clusterv1alpha1.SchemeGroupVersion)
		}
	default:
		return source{}, fmt.Errorf("kind %q is not supported: use Machine, MachineSet or MachineDeployment", tm.Kind)
	}
	switch tm.Kind {
	case "Machine":
		var m clusterv1alpha1.Machine
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return source{}, fmt.Errorf("failed to decode Machine: %w", err)
		}
		return fromTemplate(tm.Kind, m.ObjectMeta, m.ObjectMeta, m.Spec, mdOwner(m.OwnerReferences))
	case "MachineSet":
		var ms clusterv1alpha1.MachineSet
		if err := yaml.Unmarshal(doc, &ms); err != nil {
			return source{}, fmt.Errorf("failed to decode MachineSet: %w", err)
		}
		return fromTemplate(tm.Kind, ms.ObjectMeta, ms.Spec.Template.ObjectMeta, ms.Spec.Template.Spec, mdOwner(ms.OwnerReferences))
	default:
		var md clusterv1alpha1.MachineDeployment
		if err := yaml.Unmarshal(doc, &md); err != nil {
			return source{}, fmt.Errorf("failed to decode MachineDeployment: %w", err)
		}
		return fromTemplate(tm.Kind, md.ObjectMeta, md.Spec.Template.ObjectMeta, md.Spec.Template.Spec, md.Name)
	}
}

// fromTemplate builds the source of one Machine named after the object. The
// Machine's labels and annotations are those of the template, as a MachineSet
// would copy them.
func fromTemplate(kind string, obj, tmpl metav1.ObjectMeta, spec clusterv1alpha1.MachineSpec, md string) (source, error) {
	if obj.Name == "" {
		return source{}, fmt.Errorf("%s has no metadata.name", kind)
	}
	if spec.ProviderSpec.Value == nil || len(spec.ProviderSpec.Value.Raw) == 0 {
		return source{}, fmt.Errorf("%s %s: spec.providerSpec.value is required", kind, obj.Name)
	}
	ref := kind + " " + obj.Name
	if obj.Namespace != "" {
		ref = kind + " " + obj.Namespace + "/" + obj.Name
	}
	return source{
		ref: ref,
		machine: vm.MachineInfo{
			Name:              obj.Name,
			UID:               obj.UID,
			MachineDeployment: md,
			Labels:            tmpl.Labels,
			Annotations:       tmpl.Annotations,
		},
		providerSpec: spec.ProviderSpec.Value.Raw,
	}, nil
}

// mdOwner returns the MachineDeployment named by the owner references, if any.
func mdOwner(refs []metav1.OwnerReference) string {
	for _, ref := range refs {
		if ref.Kind == "MachineDeployment" {
			return ref.Name
		}
	}
	return ""
}
