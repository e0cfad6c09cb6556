package bundle

import (
	"bytes"
	"io"
	"reflect"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// hashedBlob is a blob held in memory whose digest was computed from this
// very content, so reading it needs no second hash.
type hashedBlob struct{ *bytes.Reader }

func (hashedBlob) Close() error { return nil }

// ggcrModule is go-containerregistry's module path.
const ggcrModule = "github.com/google/go-containerregistry"

// passThrough are go-containerregistry's readers that hand every Read to
// the reader in the named field unchanged, by package path and type name.
var passThrough = map[string]string{
	ggcrModule + "/pkg/v1/remote.limitedReadCloser": "ReadCloser",
	ggcrModule + "/internal/and.ReadCloser":         "Reader",
}

// verifierType is go-containerregistry's verifying reader.
const verifierType = ggcrModule + "/internal/verify.verifyReader"

// provesDigest reports whether reading r to its end without an error proves
// that the content has digest: r is a hashedBlob, or go-containerregistry's
// verifying reader expecting digest, possibly behind its pass-through
// wrappers. Remote layers are read through the latter, which hashes what
// passes and fails the read that reaches the end when the sha256 or the
// size differs, so hashing the blob again would only repeat that work. Any
// other reader is hashed by the caller. The types are internal to
// go-containerregistry, so they are recognized by package path and name.
func provesDigest(r io.Reader, digest v1.Hash) bool {
	if _, ok := r.(hashedBlob); ok {
		return true
	}
	v := reflect.ValueOf(r)
	for range len(passThrough) + 1 {
		if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
			return false
		}
		s := v.Elem()
		typ := s.Type().PkgPath() + "." + s.Type().Name()
		if typ == verifierType {
			return expects(s, digest)
		}
		field, ok := passThrough[typ]
		if !ok {
			return false
		}
		inner := s.FieldByName(field)
		if !inner.IsValid() || inner.Kind() != reflect.Interface || inner.IsNil() {
			return false
		}
		v = inner.Elem()
	}
	return false
}

// expects reports whether the verifying reader s checks digest.
func expects(s reflect.Value, digest v1.Hash) bool {
	expected := s.FieldByName("expected")
	if !expected.IsValid() || expected.Type() != reflect.TypeFor[v1.Hash]() {
		return false
	}
	return expected.FieldByName("Algorithm").String() == digest.Algorithm &&
		expected.FieldByName("Hex").String() == digest.Hex
}
