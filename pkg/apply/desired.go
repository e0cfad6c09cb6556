package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// HashAnnotation holds the hash of the desired object last written; a
// different hash means the desired object changed, possibly by a field we
// no longer set, which no value comparison can see.
const HashAnnotation = "kkp-kubevirt.io/applied-hash"

// keptMetadata are the metadata fields a desired object may set; the others
// (uid, resourceVersion, creationTimestamp, ...) belong to the API server.
var keptMetadata = []string{"name", "namespace", "labels", "annotations", "ownerReferences", "finalizers"}

// Desired returns obj as the object that is written: unstructured, with
// apiVersion and kind (from scheme for a typed obj; client-go's scheme when
// nil), without status, null fields and server-set metadata, and with
// HashAnnotation set to the hash of all that.
func Desired(obj ctrlruntimeclient.Object, scheme *runtime.Scheme) (*unstructured.Unstructured, error) {
	if scheme == nil {
		scheme = clientgoscheme.Scheme
	}
	var content map[string]any
	if u, ok := obj.(*unstructured.Unstructured); ok {
		content = u.DeepCopy().Object
	} else {
		m, err := toMap(obj)
		if err != nil {
			return nil, err
		}
		gvk, err := apiutil.GVKForObject(obj, scheme)
		if err != nil {
			return nil, fmt.Errorf("failed to find the kind of %T: %w", obj, err)
		}
		content = m
		content["apiVersion"], content["kind"] = gvk.GroupVersion().String(), gvk.Kind
	}
	delete(content, "status")
	content["metadata"] = metadata(content["metadata"])
	pruneNulls(content)
	out := &unstructured.Unstructured{Object: content}
	if out.GetAPIVersion() == "" || out.GetKind() == "" || out.GetName() == "" {
		return nil, errors.New("a desired object needs apiVersion, kind and metadata.name")
	}
	annotations := out.GetAnnotations()
	delete(annotations, HashAnnotation)
	if len(annotations) == 0 {
		annotations = nil
	}
	out.SetAnnotations(annotations)
	sum, err := hash(out.Object)
	if err != nil {
		return nil, fmt.Errorf("failed to hash %s %s: %w", out.GetKind(), out.GetName(), err)
	}
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[HashAnnotation] = sum
	out.SetAnnotations(annotations)
	return out, nil
}

// toMap returns the fields of obj as JSON would encode them.
func toMap(obj ctrlruntimeclient.Object) (map[string]any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.Object, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("failed to convert %T %s: %w", obj, obj.GetName(), err)
	}
	return m, nil
}

// metadata keeps the fields of keptMetadata of m.
func metadata(m any) map[string]any {
	in, _ := m.(map[string]any)
	out := map[string]any{}
	for _, key := range keptMetadata {
		if v, ok := in[key]; ok {
			out[key] = v
		}
	}
	return out
}

// pruneNulls deletes the null fields of m and of the objects nested in it:
// a typed object's unset struct fields, which mean nothing to apply.
func pruneNulls(m map[string]any) {
	for key, value := range m {
		switch v := value.(type) {
		case nil:
			delete(m, key)
		case map[string]any:
			pruneNulls(v)
		case []any:
			for _, item := range v {
				if nested, ok := item.(map[string]any); ok {
					pruneNulls(nested)
				}
			}
		}
	}
}

// hash returns a hex SHA-256 of the JSON of content (JSON sorts map keys,
// so equal objects hash equally).
func hash(content map[string]any) (string, error) {
	data, err := json.Marshal(content)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16]), nil
}

// Holds reports whether live carries every field of want with want's value
// (HashAnnotation included, so a changed desired object never matches).
// Fields only live has (defaults, other managers' fields, status) do not
// count: server-side apply would leave them too.
func Holds(live ctrlruntimeclient.Object, want *unstructured.Unstructured) (bool, error) {
	liveMap, err := toMap(live)
	if err != nil {
		return false, err
	}
	for key, value := range want.Object {
		if key == "apiVersion" || key == "kind" {
			continue // typed objects from a cache carry no TypeMeta
		}
		if !Contains(liveMap[key], value) {
			return false, nil
		}
	}
	return true, nil
}

// Contains reports whether live has every field of want with the same
// value: maps are compared key by key, lists element by element (same
// length), numbers by value.
func Contains(live, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return len(w) == 0 && live == nil
		}
		for key, value := range w {
			if !Contains(l[key], value) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(w) {
			return len(w) == 0 && live == nil
		}
		for i := range w {
			if !Contains(l[i], w[i]) {
				return false
			}
		}
		return true
	default:
		wn, wIsNum := number(want)
		ln, lIsNum := number(live)
		if wIsNum || lIsNum {
			return wIsNum && lIsNum && wn == ln
		}
		return want == live
	}
}

// number returns v as a float64 when it is a number of any JSON decoding.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	default:
		return 0, false
	}
}
