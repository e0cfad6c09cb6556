package config

import (
	"reflect"
	"strings"
	"sync"
)

// jsonField is a key that encoding/json maps onto a struct field.
type jsonField struct {
	name string
	typ  reflect.Type
}

// fieldCache maps a struct type to its jsonFields.
var fieldCache sync.Map

// jsonFields lists the keys encoding/json accepts for struct type t,
// including the fields promoted from embedded structs without a JSON name.
// The result is shared; callers must not modify it.
func jsonFields(t reflect.Type) []jsonField {
	if cached, ok := fieldCache.Load(t); ok {
		return cached.([]jsonField)
	}
	fields := collectFields(t)
	fieldCache.Store(t, fields)
	return fields
}

func collectFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			embedded := sf.Type
			if embedded.Kind() == reflect.Pointer {
				embedded = embedded.Elem()
			}
			if embedded.Kind() == reflect.Struct {
				out = append(out, collectFields(embedded)...)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out = append(out, jsonField{name: name, typ: sf.Type})
	}
	return out
}

// lookupField finds the field for a JSON key: an exact match first, then a
// case-insensitive one, as encoding/json does.
func lookupField(fields []jsonField, key string) (jsonField, bool) {
	for _, f := range fields {
		if f.name == key {
			return f, true
		}
	}
	for _, f := range fields {
		if strings.EqualFold(f.name, key) {
			return f, true
		}
	}
	return jsonField{}, false
}
