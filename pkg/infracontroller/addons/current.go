package addons

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// stale returns the objects of want that the tenant cluster, as reader (the
// watch cache) sees it, does not hold as rendered: missing, or with a field
// we set that differs. Fields only the live object has (defaults, other
// managers' fields) do not count, as server-side apply leaves them too.
// Applying the rest would change nothing, so it is skipped.
func stale(ctx context.Context, reader ctrlruntimeclient.Reader, want []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, obj := range want {
		current, err := holds(ctx, reader, obj)
		if err != nil {
			return nil, err
		}
		if !current {
			out = append(out, obj)
		}
	}
	return out, nil
}

// holds reports whether reader has obj with every field obj sets.
func holds(ctx context.Context, reader ctrlruntimeclient.Reader, obj *unstructured.Unstructured) (bool, error) {
	typed, err := clientgoscheme.Scheme.New(obj.GroupVersionKind())
	if err != nil {
		return false, nil //nolint:nilerr // a kind the cache cannot hold is simply applied
	}
	live, ok := typed.(ctrlruntimeclient.Object)
	if !ok {
		return false, nil
	}
	if err := reader.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(obj), live); err != nil {
		return false, ctrlruntimeclient.IgnoreNotFound(err)
	}
	liveMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
	if err != nil {
		return false, fmt.Errorf("failed to convert %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	for key, value := range obj.Object {
		if key == "apiVersion" || key == "kind" {
			continue // typed objects from a cache carry no TypeMeta
		}
		if !contains(liveMap[key], value) {
			return false, nil
		}
	}
	return true, nil
}

// contains reports whether live has every field of want with the same
// value: maps are compared key by key, lists element by element (same
// length), numbers by value.
func contains(live, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return len(w) == 0 && live == nil
		}
		for key, value := range w {
			if !contains(l[key], value) {
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
			if !contains(l[i], w[i]) {
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
