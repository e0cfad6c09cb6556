package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	sdkkubevirt "k8c.io/machine-controller/sdk/cloudprovider/kubevirt"
	"k8c.io/machine-controller/sdk/jsonutil"
	"k8c.io/machine-controller/sdk/providerconfig"
)

// filler sets every field reachable from a value to a distinct non-zero
// value: strings "v<n>", integers n, booleans true, two list items.
type filler struct{ n int }

func (f *filler) fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				f.fill(v.Field(i))
			}
		}
	case reflect.Slice:
		items := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			f.fill(items.Index(i))
		}
		v.Set(items)
	case reflect.String:
		f.n++
		v.SetString(fmt.Sprintf("v%d", f.n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f.n++
		v.SetInt(int64(f.n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		f.n++
		v.SetUint(uint64(f.n))
	default:
		panic(fmt.Sprintf("filler: unhandled kind %s", v.Kind()))
	}
}

// envelopeJSON wraps a cloudProviderSpec into a providerSpec.value.
func envelopeJSON(t testing.TB, cloudProviderSpec []byte) []byte {
	t.Helper()
	return mustJSON(t, map[string]any{
		"cloudProvider":       "kubevirt",
		"cloudProviderSpec":   json.RawMessage(cloudProviderSpec),
		"operatingSystem":     "ubuntu",
		"operatingSystemSpec": map[string]any{},
	})
}

// TestSDKRawConfigRoundTrip fills the SDK's RawConfig completely, decodes it
// with Parse and checks that every field survives with its value.
func TestSDKRawConfigRoundTrip(t *testing.T) {
	var sdk sdkkubevirt.RawConfig
	f := &filler{}
	f.fill(reflect.ValueOf(&sdk).Elem())
	if f.n < 100 {
		t.Fatalf("the filler set only %d values; it missed fields", f.n)
	}
	cps := mustJSON(t, sdk)
	if err := jsonutil.StrictUnmarshal(cps, &sdkkubevirt.RawConfig{}); err != nil {
		t.Fatalf("the SDK rejects its own fixture: %v", err)
	}

	spec, err := Parse(envelopeJSON(t, cps))
	if err != nil {
		t.Fatalf("Parse rejected a spec the SDK accepts: %v", err)
	}
	if len(spec.Warnings) > 0 {
		t.Errorf("unexpected warnings: %v", spec.Warnings)
	}
	var back sdkkubevirt.RawConfig
	if err := json.Unmarshal(mustJSON(t, spec.Raw), &back); err != nil {
		t.Fatalf("failed to decode our RawConfig as the SDK's: %v", err)
	}
	if diff := cmp.Diff(sdk, back); diff != "" {
		t.Errorf("fields changed on the way through Parse (-sdk +ours):\n%s", diff)
	}
}

// TestSharedDiffDetectsChanges makes sure sharedDiff, which the quirks test
// and the fuzz test rely on, notices a changed value.
func TestSharedDiffDetectsChanges(t *testing.T) {
	var sdk sdkkubevirt.RawConfig
	(&filler{}).fill(reflect.ValueOf(&sdk).Elem())
	spec, err := Parse(envelopeJSON(t, mustJSON(t, sdk)))
	if err != nil {
		t.Fatalf("failed to parse: %v", err)
	}
	if diffs := sharedDiff("c", reflect.ValueOf(sdk), reflect.ValueOf(spec.Raw)); len(diffs) > 0 {
		t.Fatalf("unexpected differences: %v", diffs)
	}
	spec.Raw.VirtualMachine.Template.SecondaryDisks[1].StorageAccessType.SecretKeyRef.Key = "changed"
	spec.Raw.TopologySpreadConstraints = spec.Raw.TopologySpreadConstraints[:1]
	want := []string{
		`c.VirtualMachine.Template.SecondaryDisks[1].Disk.StorageAccessType: SDK`,
		`c.TopologySpreadConstraints: SDK has 2 items, ours 1`,
	}
	diffs := sharedDiff("c", reflect.ValueOf(sdk), reflect.ValueOf(spec.Raw))
	if len(diffs) != len(want) {
		t.Fatalf("expected %d differences, got %q", len(want), diffs)
	}
	for i := range want {
		if !strings.HasPrefix(diffs[i], want[i]) {
			t.Errorf("difference %d is %q, want it to start with %q", i, diffs[i], want[i])
		}
	}
}

// TestRawConfigIsSDKSuperset checks that every JSON field of the SDK's
// RawConfig exists in ours with the same name and Go type.
func TestRawConfigIsSDKSuperset(t *testing.T) {
	assertSuperset(t, "cloudProviderSpec", reflect.TypeFor[sdkkubevirt.RawConfig](), reflect.TypeFor[RawConfig]())
}

func assertSuperset(t *testing.T, path string, sdk, ours reflect.Type) {
	t.Helper()
	if sdk == ours {
		return
	}
	sdkPkg := reflect.TypeFor[sdkkubevirt.RawConfig]().PkgPath()
	switch {
	case sdk.Kind() == reflect.Pointer && ours.Kind() == reflect.Pointer,
		sdk.Kind() == reflect.Slice && ours.Kind() == reflect.Slice:
		assertSuperset(t, path, sdk.Elem(), ours.Elem())
	case sdk.Kind() == reflect.Struct && ours.Kind() == reflect.Struct && sdk.PkgPath() == sdkPkg:
		for _, sf := range jsonFields(sdk) {
			of, ok := lookupField(jsonFields(ours), sf.name)
			if !ok || of.name != sf.name {
				t.Errorf("%s.%s: missing in our RawConfig", path, sf.name)
				continue
			}
			assertSuperset(t, path+"."+sf.name, sf.typ, of.typ)
		}
	default:
		t.Errorf("%s: the SDK has type %s, we have %s", path, sdk, ours)
	}
}

// TestSDKQuirksAccepted feeds inputs that the SDK's strict decoding
// accepts although they look odd, and checks that Parse gives the same
// values.
func TestSDKQuirksAccepted(t *testing.T) {
	inputs := map[string]string{
		"number as a ConfigVarString":          `{"virtualMachine": {"template": {"cpus": 2}}}`,
		"boolean as a ConfigVarString":         `{"clusterName": true}`,
		"keys in another case":                 `{"VirtualMachine": {"Template": {"CPUs": "2", "primarydisk": {"OSImage": "x"}}}}`,
		"unknown key in a ConfigVar object":    `{"clusterName": {"value": "a", "comment": "b"}}`,
		"nulls everywhere":                     `{"auth": null, "virtualMachine": {"instancetype": null, "dnsConfig": null}, "topologySpreadConstraints": null}`,
		"flavor and pod presets":               `{"virtualMachine": {"flavor": {"name": "a", "profile": "b"}}, "affinity": {"podAffinityPreset": "soft"}}`,
		"list of numbers as a ConfigVarString": `{"clusterName": [1,2]}`,
	}
	for name, cps := range inputs {
		t.Run(name, func(t *testing.T) {
			var sdk sdkkubevirt.RawConfig
			if err := jsonutil.StrictUnmarshal([]byte(cps), &sdk); err != nil {
				t.Fatalf("the SDK rejects the input: %v", err)
			}
			spec, err := Parse(envelopeJSON(t, []byte(cps)))
			if err != nil {
				t.Fatalf("Parse rejected what the SDK accepts: %v", err)
			}
			if diffs := sharedDiff("cloudProviderSpec", reflect.ValueOf(sdk), reflect.ValueOf(spec.Raw)); len(diffs) > 0 {
				t.Errorf("values differ:\n%s", strings.Join(diffs, "\n"))
			}
		})
	}
}

// TestSupportedOSMatchesSDK keeps supportedOS in step with the SDK.
func TestSupportedOSMatchesSDK(t *testing.T) {
	want := map[providerconfig.OperatingSystem]bool{}
	for os := range sdkkubevirt.SupportedOS {
		want[os] = true
	}
	got := map[providerconfig.OperatingSystem]bool{}
	for _, os := range supportedOS {
		got[os] = true
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("supportedOS differs from the SDK (-sdk +ours):\n%s", diff)
	}
}

// TestLegacyConversionCoversEveryField fills every flat field and checks
// that each lands at the nested path legacyPaths names for it, so both the
// conversion and the error path rewriting are complete.
func TestLegacyConversionCoversEveryField(t *testing.T) {
	var legacy LegacyConfig
	(&filler{}).fill(reflect.ValueOf(&legacy).Elem())
	var flat, nested map[string]any
	if err := json.Unmarshal(mustJSON(t, legacy), &flat); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(mustJSON(t, convertLegacy(legacy)), &nested); err != nil {
		t.Fatal(err)
	}
	for _, f := range legacyFields {
		nestedPath := f.name
		for _, m := range legacyPaths {
			if m.flat.String() == specPath.Child(f.name).String() {
				nestedPath = strings.TrimPrefix(m.nested.String(), specPath.String()+".")
			}
		}
		if f.name != clusterNameKey && nestedPath == f.name {
			t.Errorf("flat field %s has no entry in legacyPaths", f.name)
			continue
		}
		if diff := cmp.Diff(flat[f.name], lookupPath(nested, nestedPath)); diff != "" {
			t.Errorf("flat field %s did not arrive at %s (-flat +nested):\n%s", f.name, nestedPath, diff)
		}
	}
}

func lookupPath(m map[string]any, path string) any {
	var v any = m
	for _, key := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[key]
	}
	return v
}

// TestRejectedInputsAreRejectedBySDK makes sure that the type errors Parse
// reports are errors for the SDK's strict decoding too, so rejecting them
// breaks no spec that upstream accepts.
func TestRejectedInputsAreRejectedBySDK(t *testing.T) {
	inputs := map[string]string{
		"list of strings as a ConfigVarString": `{"virtualMachine": {"template": {"memory": ["4Gi"]}}}`,
		"string as a ConfigVarBool":            `{"virtualMachine": {"enableNetworkMultiQueue": "yes"}}`,
		"number as a ConfigVarString value":    `{"virtualMachine": {"template": {"cpus": {"value": 2}}}}`,
		"string as an integer":                 `{"virtualMachine": {"template": {"vcpus": {"cores": "2"}}}}`,
		"fraction as an integer":               `{"virtualMachine": {"template": {"vcpus": {"cores": 1.5}}}}`,
		"unknown field":                        `{"virtualMachine": {"template": {"cpu": "2"}}}`,
		"object as a list":                     `{"topologySpreadConstraints": {"maxSkew": "1"}}`,
	}
	for name, cps := range inputs {
		t.Run(name, func(t *testing.T) {
			if err := jsonutil.StrictUnmarshal([]byte(cps), &sdkkubevirt.RawConfig{}); err == nil {
				t.Errorf("the SDK accepts the input")
			}
			if _, err := Parse(envelopeJSON(t, []byte(cps))); !IsInvalid(err) {
				t.Errorf("expected an *InvalidError from Parse, got %v", err)
			}
		})
	}
}

// sharedDiff compares every field of an SDK kubevirt value with the field
// of the same Go name in ours and describes the differences.
func sharedDiff(path string, sdk, ours reflect.Value) []string {
	if sdk.Type() == ours.Type() {
		if !reflect.DeepEqual(sdk.Interface(), ours.Interface()) {
			return []string{fmt.Sprintf("%s: SDK %#v, ours %#v", path, sdk.Interface(), ours.Interface())}
		}
		return nil
	}
	switch sdk.Kind() {
	case reflect.Pointer:
		if sdk.IsNil() || ours.IsNil() {
			if sdk.IsNil() != ours.IsNil() {
				return []string{path + ": nil in only one of them"}
			}
			return nil
		}
		return sharedDiff(path, sdk.Elem(), ours.Elem())
	case reflect.Slice:
		if sdk.Len() != ours.Len() || sdk.IsNil() != ours.IsNil() {
			return []string{fmt.Sprintf("%s: SDK has %d items, ours %d", path, sdk.Len(), ours.Len())}
		}
		var diffs []string
		for i := range sdk.Len() {
			diffs = append(diffs, sharedDiff(fmt.Sprintf("%s[%d]", path, i), sdk.Index(i), ours.Index(i))...)
		}
		return diffs
	case reflect.Struct:
		var diffs []string
		for i := range sdk.NumField() {
			name := sdk.Type().Field(i).Name
			diffs = append(diffs, sharedDiff(path+"."+name, sdk.Field(i), ours.FieldByName(name))...)
		}
		return diffs
	default:
		return []string{fmt.Sprintf("%s: type %s against %s", path, sdk.Type(), ours.Type())}
	}
}
