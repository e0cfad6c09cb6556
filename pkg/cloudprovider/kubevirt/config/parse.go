package config

import (
	"errors"
	"io"
	"strings"

	"k8c.io/machine-controller/sdk/providerconfig"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Spec is a strictly decoded providerSpec.value.
type Spec struct {
	// Envelope is the SDK's providerconfig.Config around the cloudProviderSpec.
	Envelope providerconfig.Config
	// Raw is the decoded cloudProviderSpec, converted to the nested format
	// when it used the flat format of KKP <= 2.20.
	Raw RawConfig
	// Warnings describe input that was accepted but converted or ignored.
	Warnings []string

	// legacy is true when Raw was converted from the flat format; errors
	// then name the flat fields the user wrote.
	legacy bool
}

// Parse strictly decodes providerSpec.value (JSON): the SDK's
// providerconfig.Config envelope, then the KubeVirt cloudProviderSpec. The
// flat format of KKP <= 2.20 is converted to RawConfig with a warning.
// Unknown fields and values of the wrong JSON type are reported all at once,
// each with its field path. A value over MaxValueBytes is refused before it
// is decoded, a list or map over its Limit before its entries are checked.
// Errors are always *InvalidError.
func Parse(value []byte) (*Spec, error) {
	if tooLong := checkSize(value); tooLong != nil {
		return nil, invalid(field.ErrorList{tooLong})
	}
	doc, errs := parseDocument(value)
	if doc == nil {
		return nil, invalid(errs)
	}
	spec := &Spec{}
	warnings, envelopeErrs := decodeStrict(rootPath, doc, &spec.Envelope)
	spec.Warnings = warnings
	errs = append(errs, envelopeErrs...)

	providerValue, present := valueOf(doc, "cloudProvider")
	provider, isString := providerValue.(string)
	switch {
	case present && providerValue != nil && !isString:
		if len(errs) == 0 { // the shape check reports the type; never return no error
			errs = append(errs, field.TypeInvalid(rootPath.Child("cloudProvider"), omit, "must be a string"))
		}
		return nil, invalid(errs)
	case provider == "":
		return nil, invalid(append(errs, field.Required(rootPath.Child("cloudProvider"), `must be "kubevirt"`)))
	case provider != string(providerconfig.CloudProviderKubeVirt):
		return nil, invalid(append(errs, field.NotSupported(rootPath.Child("cloudProvider"), provider,
			[]providerconfig.CloudProvider{providerconfig.CloudProviderKubeVirt})))
	}

	cps, _ := valueOf(doc, "cloudProviderSpec")
	raw, cpsWarnings, cpsErrs, legacy := parseCloudProviderSpec(cps)
	spec.Warnings = append(spec.Warnings, cpsWarnings...)
	if errs = append(errs, cpsErrs...); len(errs) > 0 {
		return nil, invalid(errs)
	}
	spec.Raw, spec.legacy = raw, legacy
	return spec, nil
}

// parseDocument decodes value into a JSON object, keeping numbers as
// json.Number so that integers are checked exactly. Duplicate keys are
// reported, except inside the opaque operatingSystemSpec.
func parseDocument(value []byte) (map[string]any, field.ErrorList) {
	doc, dupErrs, err := parseJSONTree(value, rootPath.Child("operatingSystemSpec"))
	switch {
	case errors.Is(err, io.EOF):
		return nil, field.ErrorList{field.Required(rootPath, "")}
	case errors.Is(err, errTrailingData):
		return nil, field.ErrorList{field.Invalid(rootPath, omit, "must be a single JSON object, found data after it")}
	case err != nil:
		return nil, field.ErrorList{field.Invalid(rootPath, omit, "must be a JSON object: "+err.Error())}
	case doc == nil:
		return nil, field.ErrorList{field.Required(rootPath, "")}
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, field.ErrorList{field.TypeInvalid(rootPath, shown(doc), "must be an object, not "+jsonKind(doc))}
	}
	return obj, dupErrs
}

// parseCloudProviderSpec decodes the cloudProviderSpec, flat or nested.
func parseCloudProviderSpec(v any) (raw RawConfig, warnings []string, errs field.ErrorList, legacy bool) {
	if v == nil {
		return raw, nil, field.ErrorList{field.Required(specPath, "")}, false
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return raw, nil, field.ErrorList{field.TypeInvalid(specPath, shown(v), "must be an object, not "+jsonKind(v))}, false
	}
	if flat, nested := classifyKeys(obj); len(flat) > 0 {
		raw, warnings, errs = parseLegacy(obj, flat, nested)
		return raw, warnings, errs, true
	}
	warnings, errs = decodeStrict(specPath, obj, &raw)
	return raw, warnings, errs, false
}

// valueOf returns the value of key in obj, matched like encoding/json
// matches keys: exactly first, then ignoring case.
func valueOf(obj map[string]any, key string) (any, bool) {
	if v, ok := obj[key]; ok {
		return v, true
	}
	for _, k := range sortedKeys(obj) {
		if strings.EqualFold(k, key) {
			return obj[k], true
		}
	}
	return nil, false
}
