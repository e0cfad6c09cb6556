package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxDepth bounds the nesting of providerSpec.value; real specs nest about
// ten levels.
const maxDepth = 100

// jsonTree decodes one JSON document into map[string]any, []any, string,
// json.Number, bool and nil. Unlike encoding/json into a map it reports keys
// that occur twice in one object (ignoring case, as encoding/json matches
// them against struct fields): encoding/json would merge or overwrite such
// duplicates depending on the target type.
type jsonTree struct {
	dec  *json.Decoder
	errs field.ErrorList
	// opaque is the path whose duplicates are not reported, because its
	// content is passed on without being interpreted here.
	opaque string
}

// errTrailingData reports input after the first JSON value.
var errTrailingData = errors.New("found data after the JSON value")

// parseJSONTree decodes value; syntax errors are returned as error,
// duplicate keys as field errors.
func parseJSONTree(value []byte, opaque *field.Path) (any, field.ErrorList, error) {
	dec := json.NewDecoder(bytes.NewReader(value))
	dec.UseNumber()
	t := &jsonTree{dec: dec, opaque: opaque.String()}
	v, err := t.value(rootPath, 0)
	if err != nil {
		return nil, nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, nil, errTrailingData
	}
	return v, t.errs, nil
}

func (t *jsonTree) value(p *field.Path, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	tok, err := t.dec.Token()
	if err != nil {
		if depth > 0 {
			return nil, unexpectedEOF(err)
		}
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		return t.object(p, depth)
	case json.Delim('['):
		return t.list(p, depth)
	default:
		return tok, nil // string, json.Number, bool or nil
	}
}

func (t *jsonTree) object(p *field.Path, depth int) (any, error) {
	obj := map[string]any{}
	var keys []string // in document order, so duplicate reports are stable
	for t.dec.More() {
		tok, err := t.dec.Token()
		if err != nil {
			return nil, unexpectedEOF(err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key %v is not a string", tok)
		}
		if dup := duplicateKey(obj, keys, key); dup != "" && !strings.HasPrefix(p.String(), t.opaque) {
			t.errs = append(t.errs, field.Invalid(p, key, fmt.Sprintf("duplicate field (also given as %q); each field may appear once, ignoring case", dup)))
		}
		v, err := t.value(p.Child(key), depth+1)
		if err != nil {
			return nil, err
		}
		if _, seen := obj[key]; !seen {
			keys = append(keys, key)
		}
		obj[key] = v
	}
	if _, err := t.dec.Token(); err != nil { // the closing brace
		return nil, unexpectedEOF(err)
	}
	return obj, nil
}

func (t *jsonTree) list(p *field.Path, depth int) (any, error) {
	items := []any{}
	for t.dec.More() {
		v, err := t.value(p.Index(len(items)), depth+1)
		if err != nil {
			return nil, err
		}
		items = append(items, v)
	}
	if _, err := t.dec.Token(); err != nil { // the closing bracket
		return nil, unexpectedEOF(err)
	}
	return items, nil
}

// duplicateKey returns the first of keys (the keys of obj in document
// order) that equals key ignoring case, or "".
func duplicateKey(obj map[string]any, keys []string, key string) string {
	if _, ok := obj[key]; ok {
		return key
	}
	for _, k := range keys {
		if strings.EqualFold(k, key) {
			return k
		}
	}
	return ""
}

// unexpectedEOF turns the end of input inside a value into an error.
func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
