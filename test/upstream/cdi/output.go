package main

import (
	"encoding/json"
	"fmt"
	"os"
)

// write prints objs to stdout as a JSON List. encoding/json keeps every
// field (KubeVirt's own YAML helper drops some of a CRD's).
func write(objs []any) error {
	items := make([]json.RawMessage, 0, len(objs))
	for _, obj := range objs {
		raw, err := json.Marshal(obj)
		if err != nil {
			return fmt.Errorf("failed to marshal %T: %w", obj, err)
		}
		items = append(items, raw)
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
}
