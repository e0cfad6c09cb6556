package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	sdkkubevirt "k8c.io/machine-controller/sdk/cloudprovider/kubevirt"
	"k8c.io/machine-controller/sdk/jsonutil"
	"k8c.io/machine-controller/sdk/providerconfig"
)

// fuzzResolver resolves every reference to "1", so that Resolve never fails
// for a transient reason.
type fuzzResolver struct{}

func (fuzzResolver) GetStringValue(cv providerconfig.ConfigVarString) (string, error) {
	if refComplete(cv.SecretKeyRef.ObjectReference, cv.SecretKeyRef.Key) ||
		refComplete(cv.ConfigMapKeyRef.ObjectReference, cv.ConfigMapKeyRef.Key) {
		return "1", nil
	}
	return cv.Value, nil
}

func (fuzzResolver) GetBoolValue(cv providerconfig.ConfigVarBool) (bool, bool, error) {
	if cv.Value == nil {
		return false, false, nil
	}
	return *cv.Value, true, nil
}

// FuzzParse checks that no input makes Parse or Resolve panic and that
// every error they return is an *InvalidError with at least one problem.
// The seed corpus is in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"cloudProvider":"kubevirt","cloudProviderSpec":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := Parse(data)
		assertSameAsSDK(t, data, spec, err)
		if err != nil {
			assertInvalid(t, err)
			return
		}
		if spec == nil {
			t.Fatal("Parse returned neither a spec nor an error")
		}
		settings, err := Resolve(t.Context(), spec, fuzzResolver{}, Options{Getenv: func(string) string { return "" }})
		if err != nil {
			assertInvalid(t, err)
			return
		}
		if settings == nil {
			t.Fatal("Resolve returned neither settings nor an error")
		}
	})
}

// assertSameAsSDK checks the compatibility guarantee: a KubeVirt spec that
// the SDK decodes strictly decodes here too, with the same values. Inputs
// this package rejects on purpose (duplicate keys, deep nesting, data after
// the JSON value) are skipped.
func assertSameAsSDK(t *testing.T, data []byte, spec *Spec, err error) {
	t.Helper()
	var cfg providerconfig.Config
	if jsonutil.StrictUnmarshal(data, &cfg) != nil || cfg.CloudProvider != providerconfig.CloudProviderKubeVirt {
		return
	}
	var sdk sdkkubevirt.RawConfig
	if len(cfg.CloudProviderSpec.Raw) == 0 || jsonutil.StrictUnmarshal(cfg.CloudProviderSpec.Raw, &sdk) != nil {
		return
	}
	if _, dups, treeErr := parseJSONTree(data, rootPath.Child("operatingSystemSpec")); treeErr != nil || len(dups) > 0 {
		return
	}
	if err != nil {
		t.Fatalf("Parse rejects a spec the SDK accepts: %v", err)
	}
	if diffs := sharedDiff("cloudProviderSpec", reflect.ValueOf(sdk), reflect.ValueOf(spec.Raw)); len(diffs) > 0 {
		t.Fatalf("Parse decodes other values than the SDK:\n%s", strings.Join(diffs, "\n"))
	}
}

func assertInvalid(t *testing.T, err error) {
	t.Helper()
	var invalid *InvalidError
	if !errors.As(err, &invalid) {
		t.Fatalf("expected an *InvalidError, got %T: %v", err, err)
	}
	if len(invalid.Errs) == 0 {
		t.Fatalf("an *InvalidError without problems: %v", err)
	}
	if err.Error() == "" {
		t.Fatal("an empty error message")
	}
}
