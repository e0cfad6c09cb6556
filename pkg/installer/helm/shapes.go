package helm

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/releaseutil"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// TypeKeyword is the keyword of a values.schema.json node whose value is
// passed into a Kubernetes object as it is (resources, affinity, a
// KubeVirt configuration): its keys are checked against that type instead
// of the schema. Its value names either a Kubernetes type by its OpenAPI
// name (a key of Types) or a field of a CRD in the chart's crds/ as
// "<CRD name>/<version>:<field path>", e.g.
// "kubevirts.kubevirt.io/v1:spec.configuration". Helm ignores the keyword.
const TypeKeyword = "x-kkp-type"

// Types are the Kubernetes types TypeKeyword may name.
var Types = map[string]reflect.Type{
	"io.k8s.api.core.v1.Affinity":                        reflect.TypeFor[corev1.Affinity](),
	"io.k8s.api.core.v1.Toleration":                      reflect.TypeFor[corev1.Toleration](),
	"io.k8s.api.core.v1.ResourceRequirements":            reflect.TypeFor[corev1.ResourceRequirements](),
	"io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector": reflect.TypeFor[metav1.LabelSelector](),
}

// shape is what an object or array value may hold. A nil shape checks
// nothing.
type shape interface {
	// field returns the shape of key k of an object and whether the
	// object may have k.
	field(k string) (shape, bool)
	// fields are the keys the object knows, sorted, for suggestions.
	fields() []string
	// items is the shape of an array's items.
	items() shape
}

// schemaShape is a node of a JSON schema: a chart's values.schema.json or
// a CRD's openAPIV3Schema. It knows the keywords those use for structure:
// $ref to local definitions, properties, additionalProperties, items,
// allOf, if/then/else, x-kubernetes-preserve-unknown-fields and
// TypeKeyword.
type schemaShape struct {
	doc  *schemaDoc
	node map[string]any
}

// schemaDoc is one schema document and the chart it belongs to.
type schemaDoc struct {
	root  map[string]any
	chart *chart.Chart
	// structural is set for a CRD's schema, where an object without
	// additionalProperties knows only its properties (the API server
	// prunes the others); in JSON schema such an object takes any key.
	structural bool
}

// shapeOf returns the shape of a schema node, following $ref and
// TypeKeyword.
func (d *schemaDoc) shapeOf(node any) (shape, error) {
	m, ok := node.(map[string]any)
	if !ok {
		return nil, nil
	}
	for range 32 {
		ref, ok := m["$ref"].(string)
		if !ok {
			break
		}
		target, err := d.resolve(ref)
		if err != nil {
			return nil, err
		}
		m = target
	}
	if name, ok := m[TypeKeyword].(string); ok {
		return typeShape(d.chart, name)
	}
	return schemaShape{doc: d, node: m}, nil
}

// resolve returns the node of a local reference, "#/definitions/x" or
// "#/$defs/x".
func (d *schemaDoc) resolve(ref string) (map[string]any, error) {
	var cur any = d.root
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, _ := cur.(map[string]any)
		cur = m[part]
	}
	m, ok := cur.(map[string]any)
	if !strings.HasPrefix(ref, "#/") || !ok {
		return nil, fmt.Errorf("the schema's $ref %q names no definition of the schema", ref)
	}
	return m, nil
}

// parts are the node and the subschemas whose properties also apply.
func (s schemaShape) parts() []map[string]any {
	out := []map[string]any{s.node}
	for _, key := range []string{"then", "else"} {
		if m, ok := s.node[key].(map[string]any); ok {
			out = append(out, m)
		}
	}
	if all, ok := s.node["allOf"].([]any); ok {
		for _, sub := range all {
			if m, ok := sub.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

func (s schemaShape) field(k string) (shape, bool) {
	if s.node["x-kubernetes-preserve-unknown-fields"] == true {
		return nil, true
	}
	closed := s.doc.structural
	for _, p := range s.parts() {
		if props, ok := p["properties"].(map[string]any); ok {
			if sub, ok := props[k]; ok {
				sh, _ := s.doc.shapeOf(sub)
				return sh, true
			}
		}
		switch extra := p["additionalProperties"].(type) {
		case map[string]any:
			sh, _ := s.doc.shapeOf(extra)
			return sh, true
		case bool:
			closed = closed || !extra
		}
	}
	return nil, !closed
}

func (s schemaShape) fields() []string {
	var names []string
	for _, p := range s.parts() {
		if props, ok := p["properties"].(map[string]any); ok {
			names = append(names, slices.Collect(maps.Keys(props))...)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func (s schemaShape) items() shape {
	sh, _ := s.doc.shapeOf(s.node["items"])
	return sh
}

// typeShape returns the shape TypeKeyword's value name gives: a Go type of
// Types or a CRD field of ch.
func typeShape(ch *chart.Chart, name string) (shape, error) {
	if t, ok := Types[name]; ok {
		return goShape(t), nil
	}
	crd, path, ok := strings.Cut(name, ":")
	if !ok {
		return nil, fmt.Errorf("the schema's %s %q is neither a known Kubernetes type nor <CRD>/<version>:<path>", TypeKeyword, name)
	}
	root, err := crdSchema(ch, crd)
	if err != nil {
		return nil, err
	}
	doc := &schemaDoc{root: root, chart: ch, structural: true}
	node := root
	for _, part := range strings.Split(path, ".") {
		props, _ := node["properties"].(map[string]any)
		if node, ok = props[part].(map[string]any); !ok {
			return nil, fmt.Errorf("the schema's %s %q: CRD %s has no field %s", TypeKeyword, name, crd, path)
		}
	}
	return schemaShape{doc: doc, node: node}, nil
}

// crdSchema returns the openAPIV3Schema of version of the CRD of ch named
// by "<name>/<version>".
func crdSchema(ch *chart.Chart, nameVersion string) (map[string]any, error) {
	name, version, _ := strings.Cut(nameVersion, "/")
	for _, f := range ch.CRDObjects() {
		for _, doc := range releaseutil.SplitManifests(string(f.File.Data)) {
			var crd struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
				Spec struct {
					Versions []struct {
						Name   string `json:"name"`
						Schema struct {
							OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
						} `json:"schema"`
					} `json:"versions"`
				} `json:"spec"`
			}
			if err := yaml.Unmarshal([]byte(doc), &crd); err != nil {
				return nil, fmt.Errorf("failed to parse %s of chart %s: %w", f.Filename, ch.Name(), err)
			}
			if crd.Metadata.Name != name {
				continue
			}
			for _, v := range crd.Spec.Versions {
				if v.Name == version && v.Schema.OpenAPIV3Schema != nil {
					return v.Schema.OpenAPIV3Schema, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("chart %s has no CRD %s with a schema for version %q", ch.Name(), name, version)
}

// goType is the shape of a Go API type, by its JSON field names.
type goType struct {
	t reflect.Type
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// goShape returns the shape of t; nil for a type that decodes itself
// (resource.Quantity, intstr.IntOrString) or holds anything.
func goShape(t reflect.Type) shape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice, reflect.Array:
		return goType{t: t}
	default:
		return nil
	}
}

func (g goType) field(k string) (shape, bool) {
	if g.t.Kind() == reflect.Map {
		return goShape(g.t.Elem()), true
	}
	if g.t.Kind() != reflect.Struct {
		return nil, false
	}
	f, ok := jsonFields(g.t)[k]
	if !ok {
		return nil, false
	}
	return goShape(f), true
}

func (g goType) fields() []string {
	if g.t.Kind() != reflect.Struct {
		return nil
	}
	return slices.Sorted(maps.Keys(jsonFields(g.t)))
}

func (g goType) items() shape {
	if g.t.Kind() == reflect.Slice || g.t.Kind() == reflect.Array {
		return goShape(g.t.Elem())
	}
	return nil
}

// jsonFields returns the fields of struct type t by their JSON names,
// with inlined and embedded structs flattened.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if (f.Anonymous && name == "") || strings.Contains(","+opts+",", ",inline,") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				maps.Copy(out, jsonFields(ft))
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
