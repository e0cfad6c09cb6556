package helm

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/suggest"
)

// unknownValues returns values without the keys ch's values.schema.json
// does not know, at every level, and one line per such key naming its
// path (as --set writes it) and the closest known key, or the known keys
// when none is close. Inside a node with TypeKeyword the keys are those
// of the named Kubernetes type or CRD field.
func unknownValues(ch *chart.Chart, values map[string]any) (map[string]any, []string, error) {
	if len(ch.Schema) == 0 {
		return values, nil, nil
	}
	var root map[string]any
	if err := json.Unmarshal(ch.Schema, &root); err != nil {
		return nil, nil, fmt.Errorf("failed to parse the values.schema.json of chart %s: %w", ch.Name(), err)
	}
	doc := &schemaDoc{root: root, chart: ch}
	sh, err := doc.shapeOf(root)
	if err != nil {
		return nil, nil, err
	}
	w := &walker{}
	pruned, _ := w.walk(sh, values, "").(map[string]any)
	return pruned, w.lines, nil
}

// walker collects the unknown keys of one walk.
type walker struct {
	lines []string
}

// walk returns v without the keys sh does not know, recording each.
func (w *walker) walk(sh shape, v any, path string) any {
	if sh == nil {
		return v
	}
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			child, ok := sh.field(k)
			if !ok {
				w.lines = append(w.lines, unknownLine(join(path, k), k, sh.fields()))
				continue
			}
			out[k] = w.walk(child, v[k], join(path, k))
		}
		return out
	case []any:
		items := sh.items()
		out := make([]any, len(v))
		for i, item := range v {
			out[i] = w.walk(items, item, fmt.Sprintf("%s[%d]", path, i))
		}
		return out
	default:
		return v
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// unknownLine says that the value at path is unknown: the closest of
// known when one is close, else all of them.
func unknownLine(path, key string, known []string) string {
	if best := suggest.Closest(key, known); best != "" {
		return fmt.Sprintf("- unknown value %s: did you mean %s?", path, best)
	}
	if len(known) == 0 {
		return fmt.Sprintf("- unknown value %s: the value it is in takes no keys", path)
	}
	return fmt.Sprintf("- unknown value %s: the values here are %s", path, strings.Join(known, ", "))
}
