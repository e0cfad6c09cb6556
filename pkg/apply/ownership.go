package apply

import (
	"encoding/json"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// needsMigration reports whether live carries fields that manager set with
// a plain write (Create, Update) and want no longer sets. Server-side apply
// removes only the fields the Apply entry of a manager owns alone; the ones
// its Update entry (every object we create has one) also owns would stay,
// so that entry must first be merged into the Apply entry. A fields entry
// that does not decode counts as needing it.
func needsMigration(live ctrlruntimeclient.Object, want map[string]any, manager string) bool {
	for _, entry := range live.GetManagedFields() {
		if entry.Manager != manager || entry.Operation != metav1.ManagedFieldsOperationUpdate || entry.Subresource != "" || entry.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(entry.FieldsV1.GetRawBytes(), &fields); err != nil {
			return true
		}
		if !covered(fields, want) {
			return true
		}
	}
	return false
}

// covered reports whether value has every field of fields, a FieldsV1 set
// (keys "f:<field>", "k:<key fields>", "v:<value>", "i:<index>", and "."
// for the node itself).
func covered(fields map[string]any, value any) bool {
	for key, sub := range fields {
		nested, _ := sub.(map[string]any)
		child, ok := member(key, value)
		if !ok {
			return false
		}
		if key != "." && len(nested) > 0 && !covered(nested, child) {
			return false
		}
	}
	return true
}

// member returns the part of value that a key of a FieldsV1 set names.
func member(key string, value any) (any, bool) {
	if key == "." {
		return value, true
	}
	kind, name, ok := strings.Cut(key, ":")
	if !ok {
		return nil, false
	}
	switch kind {
	case "f":
		m, ok := value.(map[string]any)
		if !ok {
			return nil, false
		}
		child, ok := m[name]
		return child, ok
	case "k":
		var keys map[string]any
		if err := json.Unmarshal([]byte(name), &keys); err != nil {
			return nil, false
		}
		return find(value, func(item any) bool { return Contains(item, keys) })
	case "v":
		var want any
		if err := json.Unmarshal([]byte(name), &want); err != nil {
			return nil, false
		}
		return find(value, func(item any) bool { return Contains(item, want) && Contains(want, item) })
	case "i":
		list, _ := value.([]any)
		i, err := strconv.Atoi(name)
		if err != nil || i < 0 || i >= len(list) {
			return nil, false
		}
		return list[i], true
	}
	return nil, false
}

// find returns the first item of the list value that match accepts.
func find(value any, match func(any) bool) (any, bool) {
	list, _ := value.([]any)
	for _, item := range list {
		if match(item) {
			return item, true
		}
	}
	return nil, false
}
