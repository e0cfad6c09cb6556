package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"k8c.io/machine-controller/sdk/providerconfig"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/suggest"
)

var (
	configVarStringType = reflect.TypeFor[providerconfig.ConfigVarString]()
	configVarBoolType   = reflect.TypeFor[providerconfig.ConfigVarBool]()
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
)

// decodeStrict decodes the JSON value v into out (a pointer) the way
// encoding/json with DisallowUnknownFields does, but reports every unknown
// field and type mismatch under path p instead of only the first one.
// Unknown keys inside ConfigVar objects are accepted, as the SDK accepts
// them, and returned as warnings.
func decodeStrict(p *field.Path, v any, out any) (warnings []string, errs field.ErrorList) {
	c := &shapeChecker{}
	c.check(p, v, reflect.TypeOf(out).Elem())
	if len(c.errs) > 0 {
		return c.warnings, c.errs
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return c.warnings, field.ErrorList{field.Invalid(p, omit, fmt.Sprintf("cannot be encoded: %v", err))}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return c.warnings, field.ErrorList{decodeError(p, err)}
	}
	return c.warnings, nil
}

// decodeError turns an encoding/json error the shape check did not foresee
// into a field error.
func decodeError(p *field.Path, err error) *field.Error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		for _, name := range strings.Split(typeErr.Field, ".") {
			p = p.Child(name)
		}
		return field.TypeInvalid(p, omit, fmt.Sprintf("must be %s, not a JSON %s", kindName(typeErr.Type), typeErr.Value))
	}
	return field.Invalid(p, omit, err.Error())
}

// shapeChecker compares decoded JSON (from a decoder with UseNumber) with
// the Go type it will be decoded into.
type shapeChecker struct {
	errs     field.ErrorList
	warnings []string
	// lenient is > 0 inside ConfigVar objects, whose unknown keys the SDK
	// ignores.
	lenient int
}

func (c *shapeChecker) check(p *field.Path, v any, t reflect.Type) {
	if v == nil {
		return
	}
	switch {
	case t == configVarStringType:
		c.configVar(p, v, reflect.TypeFor[string](), "a string")
		return
	case t == configVarBoolType:
		c.configVar(p, v, reflect.TypeFor[*bool](), "a boolean")
		return
	case t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType):
		return // decoded by its own method, e.g. runtime.RawExtension
	}
	switch t.Kind() {
	case reflect.Pointer:
		c.check(p, v, t.Elem())
	case reflect.Struct:
		c.object(p, v, t)
	case reflect.Slice, reflect.Array:
		c.list(p, v, t)
	case reflect.Map:
		c.dict(p, v, t)
	case reflect.Interface:
	default:
		c.scalar(p, v, t)
	}
}

// configVar checks a ConfigVarString or ConfigVarBool: a bare value of the
// scalar kind, or an object with value, secretKeyRef and configMapKeyRef.
func (c *shapeChecker) configVar(p *field.Path, v any, valueType reflect.Type, want string) {
	obj, isObject := v.(map[string]any)
	if !isObject {
		if !acceptsBareValue(v, valueType) {
			c.errs = append(c.errs, field.TypeInvalid(p, shown(v),
				fmt.Sprintf("must be %s or an object with value, secretKeyRef or configMapKeyRef, not %s", want, jsonKind(v))))
		}
		return
	}
	c.lenient++
	defer func() { c.lenient-- }()
	shape := configVarStringShape
	if valueType.Kind() == reflect.Pointer {
		shape = configVarBoolShape
	}
	c.object(p, obj, shape)
}

// The object forms of ConfigVarString and ConfigVarBool, as their
// UnmarshalJSON methods decode them.
var (
	configVarStringShape = configVarShape(reflect.TypeFor[string]())
	configVarBoolShape   = configVarShape(reflect.TypeFor[*bool]())
)

func configVarShape(valueType reflect.Type) reflect.Type {
	return reflect.StructOf([]reflect.StructField{
		{Name: "Value", Type: valueType, Tag: `json:"value"`},
		{Name: "SecretKeyRef", Type: reflect.TypeFor[providerconfig.GlobalSecretKeySelector](), Tag: `json:"secretKeyRef"`},
		{Name: "ConfigMapKeyRef", Type: reflect.TypeFor[providerconfig.GlobalConfigMapKeySelector](), Tag: `json:"configMapKeyRef"`},
	})
}

// acceptsBareValue reports whether the SDK's ConfigVar decoding accepts v
// outside an object: a ConfigVarBool takes a boolean; a ConfigVarString
// takes the text of any value its UnmarshalJSON can unquote (so 2 is "2").
func acceptsBareValue(v any, valueType reflect.Type) bool {
	if valueType.Kind() == reflect.Pointer {
		_, isBool := v.(bool)
		return isBool
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return false
	}
	var cv providerconfig.ConfigVarString
	return cv.UnmarshalJSON(raw) == nil
}

func (c *shapeChecker) object(p *field.Path, v any, t reflect.Type) {
	obj, ok := v.(map[string]any)
	if !ok {
		c.errs = append(c.errs, field.TypeInvalid(p, shown(v), "must be an object, not "+jsonKind(v)))
		return
	}
	fields := jsonFields(t)
	for _, key := range sortedKeys(obj) {
		f, found := lookupField(fields, key)
		if !found {
			c.unknown(p, key, fields)
			continue
		}
		// A list or map over its limit is refused before any entry is
		// looked at, so that its size costs nothing but its decoding.
		if l, bounded := limitOf(t, f.name); bounded && entries(obj[key]) > l.Max {
			c.errs = append(c.errs, field.TooMany(p.Child(f.name), entries(obj[key]), l.Max))
			continue
		}
		c.check(p.Child(f.name), obj[key], f.typ)
	}
}

func (c *shapeChecker) unknown(p *field.Path, key string, fields []jsonField) {
	if c.lenient > 0 {
		c.warnings = append(c.warnings, fmt.Sprintf("%s: unknown field %q is ignored", p, key))
		return
	}
	names := make([]string, 0, len(fields))
	for _, f := range fields {
		names = append(names, f.name)
	}
	sort.Strings(names)
	detail := "unknown field (known fields: " + strings.Join(names, ", ") + ")"
	if len(names) == 0 {
		detail = "unknown field (this object takes no fields)"
	}
	if guess := suggest.Closest(key, names); guess != "" {
		detail = fmt.Sprintf("unknown field (did you mean %q?)", guess)
	}
	c.errs = append(c.errs, field.Invalid(p, key, detail))
}

func (c *shapeChecker) list(p *field.Path, v any, t reflect.Type) {
	items, ok := v.([]any)
	if !ok {
		c.errs = append(c.errs, field.TypeInvalid(p, shown(v), "must be a list, not "+jsonKind(v)))
		return
	}
	for i, item := range items {
		c.check(p.Index(i), item, t.Elem())
	}
}

func (c *shapeChecker) dict(p *field.Path, v any, t reflect.Type) {
	obj, ok := v.(map[string]any)
	if !ok || t.Key().Kind() != reflect.String {
		c.errs = append(c.errs, field.TypeInvalid(p, shown(v), "must be an object, not "+jsonKind(v)))
		return
	}
	for _, key := range sortedKeys(obj) {
		c.check(p.Key(key), obj[key], t.Elem())
	}
}

func (c *shapeChecker) scalar(p *field.Path, v any, t reflect.Type) {
	n, isNumber := v.(json.Number)
	ok, numeric := true, true
	var err error
	switch t.Kind() {
	case reflect.String:
		_, ok = v.(string)
		numeric = false
	case reflect.Bool:
		_, ok = v.(bool)
		numeric = false
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err = strconv.ParseInt(string(n), 10, t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		_, err = strconv.ParseUint(string(n), 10, t.Bits())
	case reflect.Float32, reflect.Float64:
		_, err = strconv.ParseFloat(string(n), t.Bits())
	default:
		numeric = false // no other kinds occur in the wire types
	}
	switch {
	case numeric && isNumber && err != nil:
		c.errs = append(c.errs, field.Invalid(p, n, "must be "+kindName(t)+numberRange(t)))
	case (numeric && !isNumber) || !ok:
		c.errs = append(c.errs, field.TypeInvalid(p, shown(v), fmt.Sprintf("must be %s, not %s", kindName(t), jsonKind(v))))
	}
}

// numberRange describes the values an integer type holds.
func numberRange(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fmt.Sprintf(" between %d and %d", -(int64(1) << (t.Bits() - 1)), int64(1)<<(t.Bits()-1)-1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf(" between 0 and %d", uint64(1)<<t.Bits()-1)
	default:
		return ""
	}
}

// kindName describes what JSON value a Go type takes.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Pointer:
		return kindName(t.Elem())
	default:
		return "an object"
	}
}

// jsonKind describes a decoded JSON value.
func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	default:
		return "null"
	}
}

// shown returns the value to print in an error: scalars as they are,
// objects and lists omitted.
func shown(v any) any {
	switch v := v.(type) {
	case string, bool:
		return v
	case json.Number:
		return v
	default:
		return omit
	}
}

func sortedKeys(obj map[string]any) []string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
