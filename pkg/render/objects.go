package render

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// source is one input object reduced to what a Machine of it would carry.
type source struct {
	// where locates the object in the input for messages, e.g.
	// "stdin: document 2: items[0]".
	where string
	// ref names the input object for messages, e.g. "MachineDeployment kube-system/md-1".
	ref          string
	machine      vm.MachineInfo
	providerSpec []byte
}

// supportedKinds is what render reads, for messages.
const supportedKinds = "use Machine, MachineSet or MachineDeployment, or a List of them"

// listKinds are the typed lists of the cluster.k8s.io kinds; their items
// may lack apiVersion and kind, which are those of the list without "List".
var listKinds = []string{"MachineList", "MachineSetList", "MachineDeploymentList"}

// readSources decodes every YAML or JSON document of r into sources; a List
// contributes its items. name names r in messages. Input without a single
// object is an error.
func readSources(r io.Reader, name string) ([]source, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bufio.NewReader(r), 4096)
	var out []source
	for i := 1; ; i++ {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("%s: document %d: %w", name, i, err)
		}
		if len(doc) == 0 {
			continue
		}
		sources, err := decodeObject(fmt.Sprintf("%s: document %d", name, i), nil, doc)
		if err != nil {
			return nil, err
		}
		out = append(out, sources...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no MachineDeployment, MachineSet or Machine found in %s", name)
	}
	return out, nil
}

// decodeObject decodes the object at path (nil for the document itself) of
// the document doc: one source, or those of a List's items.
func decodeObject(doc string, path *field.Path, obj map[string]any) ([]source, error) {
	where := doc
	if path != nil {
		where += ": " + path.String()
	}
	items, isList, err := listItems(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if !isList {
		src, err := decodeSource(obj)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		src.where = where
		return []source{src}, nil
	}
	if path == nil {
		path = field.NewPath("items")
	} else {
		path = path.Child("items")
	}
	var out []source
	for i, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: %s: must be an object, not %s", doc, path.Index(i), jsonKind(item))
		}
		sources, err := decodeObject(doc, path.Index(i), m)
		if err != nil {
			return nil, err
		}
		out = append(out, sources...)
	}
	return out, nil
}

// listItems returns the items of a v1 List or a typed list of the
// cluster.k8s.io kinds, and whether obj is a list at all. Items of a typed
// list without apiVersion and kind (Go clients encode typed lists so) get
// those of the list.
func listItems(obj map[string]any) ([]any, bool, error) {
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	switch {
	case kind == "List":
		if apiVersion != "v1" {
			return nil, true, fmt.Errorf("apiVersion %q of List is not supported: use v1", apiVersion)
		}
	case slices.Contains(listKinds, kind):
		if apiVersion != clusterv1alpha1.SchemeGroupVersion.String() {
			return nil, true, fmt.Errorf("apiVersion %q of %s is not supported: use %s", apiVersion, kind, clusterv1alpha1.SchemeGroupVersion)
		}
	default:
		return nil, false, nil
	}
	items, ok := obj["items"].([]any)
	if !ok && obj["items"] != nil {
		return nil, true, fmt.Errorf("items must be a list, not %s", jsonKind(obj["items"]))
	}
	if kind != "List" {
		for _, item := range items {
			if m, ok := item.(map[string]any); ok && m["kind"] == nil && m["apiVersion"] == nil {
				m["kind"], m["apiVersion"] = strings.TrimSuffix(kind, "List"), apiVersion
			}
		}
	}
	return items, true, nil
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	default:
		return "a number"
	}
}

// decodeSource decodes one Machine, MachineSet or MachineDeployment.
func decodeSource(obj map[string]any) (source, error) {
	doc, err := json.Marshal(obj)
	if err != nil {
		return source{}, fmt.Errorf("failed to encode the object: %w", err)
	}
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return source{}, err
	}
	switch tm.Kind {
	case "Machine", "MachineSet", "MachineDeployment":
		if tm.APIVersion != clusterv1alpha1.SchemeGroupVersion.String() {
			return source{}, fmt.Errorf("apiVersion %q of %s is not supported: use %s", tm.APIVersion, tm.Kind, clusterv1alpha1.SchemeGroupVersion)
		}
	case "":
		return source{}, errors.New("kind is missing: " + supportedKinds)
	case "VirtualMachine", "Secret":
		return source{}, fmt.Errorf("kind %q is not supported: %s (VirtualMachines and Secrets are what render prints)", tm.Kind, supportedKinds)
	default:
		return source{}, fmt.Errorf("kind %q is not supported: %s", tm.Kind, supportedKinds)
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
