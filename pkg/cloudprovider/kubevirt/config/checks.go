package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Syntax checks from k8s.io/apimachinery, each returning its complaints.
var (
	labelValueCheck   = validation.IsValidLabelValue
	labelKeyCheck     = validation.IsQualifiedName
	dnsLabelCheck     = validation.IsDNS1123Label
	dnsSubdomainCheck = validation.IsDNS1123Subdomain
)

// validationMessages runs check on v and joins its complaints, "" when v is
// fine.
func validationMessages(check func(string) []string, v string) string {
	return strings.Join(check(v), "; ")
}

func (rs *resolution) syntax(p *field.Path, v string, check func(string) []string) bool {
	if msgs := validationMessages(check, v); msgs != "" {
		rs.add(field.Invalid(p, v, msgs))
		return false
	}
	return true
}

// labelValue checks a label value ("" is valid).
func (rs *resolution) labelValue(p *field.Path, v string) bool {
	return rs.syntax(p, v, labelValueCheck)
}

// labelKey checks a label key such as topology.kubernetes.io/zone.
func (rs *resolution) labelKey(p *field.Path, v string) bool {
	return rs.syntax(p, v, labelKeyCheck)
}

// dnsLabel checks a DNS-1123 label such as a namespace name.
func (rs *resolution) dnsLabel(p *field.Path, v string) bool {
	return rs.syntax(p, v, dnsLabelCheck)
}

// dnsSubdomain checks a DNS-1123 subdomain such as an object name.
func (rs *resolution) dnsSubdomain(p *field.Path, v string) bool {
	return rs.syntax(p, v, dnsSubdomainCheck)
}

// enum checks that v is one of allowed, reporting the allowed values.
func enum[T ~string](rs *resolution, p *field.Path, v T, allowed []T) bool {
	if containsValue(allowed, v) {
		return true
	}
	rs.add(field.NotSupported(p, v, allowed))
	return false
}

// positiveQuantity parses a Kubernetes quantity that must be above zero.
// example names valid values in the error message.
func (rs *resolution) positiveQuantity(p *field.Path, v, example string) *resource.Quantity {
	q, err := resource.ParseQuantity(v)
	if err != nil {
		rs.add(field.Invalid(p, v, "must be a Kubernetes quantity such as "+example))
		return nil
	}
	if q.Sign() <= 0 {
		rs.add(field.Invalid(p, v, "must be greater than zero"))
		return nil
	}
	return &q
}

// requiredQuantity resolves a required positive quantity.
func (rs *resolution) requiredQuantity(p *field.Path, v, example string) *resource.Quantity {
	if v == "" {
		rs.add(field.Required(p, "a Kubernetes quantity such as "+example))
		return nil
	}
	return rs.positiveQuantity(p, v, example)
}

// parseInt32 parses a decimal integer in [minimum, MaxInt32].
func (rs *resolution) parseInt32(p *field.Path, v string, minimum int64) (int32, bool) {
	n, err := strconv.ParseInt(v, 10, 32)
	switch {
	case err != nil:
		rs.add(field.Invalid(p, v, "must be a decimal integer"))
		return 0, false
	case n < minimum:
		rs.add(field.Invalid(p, v, fmt.Sprintf("must be at least %d", minimum)))
		return 0, false
	}
	return int32(n), true
}

func containsValue[T comparable](list []T, v T) bool {
	return slices.Contains(list, v)
}

// quoteList renders values as the field package does: "a", "b".
func quoteList[T ~string](values []T) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = strconv.Quote(string(v))
	}
	return strings.Join(quoted, ", ")
}
