package config

import (
	"reflect"
	"testing"
)

func TestSpecCache(t *testing.T) {
	c := NewSpecCache(2)
	a, b, third := patched(t, `{}`), patched(t, `{"cloudProviderSpec": {"clusterName": "b"}}`),
		patched(t, `{"cloudProviderSpec": {"clusterName": "c"}}`)

	first, err := c.Parse(a)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Parse(append([]byte(nil), a...))
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Error("the same value was parsed again instead of remembered")
	}

	invalid := patched(t, `{"cloudProviderSpec": {"virtualMachine": {"template": {"memory": {"value": "lots"}}}, "bogus": 1}}`)
	for range 2 {
		if _, err := c.Parse(invalid); !IsInvalid(err) {
			t.Fatalf("invalid value: got %v, want an *InvalidError", err)
		}
	}
	if got := c.Len(); got != 1 {
		t.Errorf("remembers %d Specs after one valid and one invalid value, want 1", got)
	}

	for _, v := range [][]byte{b, third} {
		if _, err := c.Parse(v); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.Len(); got != 2 {
		t.Errorf("remembers %d Specs with size 2, want 2", got)
	}
	if evicted, _ := c.Parse(a); evicted == first {
		t.Error("the least recently used Spec was kept beyond the size")
	}
}

func TestSpecCacheNil(t *testing.T) {
	var c *SpecCache
	value := patched(t, `{}`)
	first, err := c.Parse(value)
	if err != nil {
		t.Fatal(err)
	}
	if second, _ := c.Parse(value); second == first {
		t.Error("a nil SpecCache remembered a Spec")
	}
	if _, _, err := c.Load(t.Context(), []byte(`{`), nil, Options{}); !IsInvalid(err) {
		t.Errorf("Load of a truncated value: got %v, want an *InvalidError", err)
	}
	if c.Len() != 0 {
		t.Error("a nil SpecCache has a length")
	}
}

// TestResolveSharesNothingWithItsSpec checks what sharing a Spec from a
// SpecCache relies on, for every valid case: Resolve leaves its Spec as
// Parse made it, and changing everything in the Settings it returns
// changes nothing in the Spec.
func TestResolveSharesNothingWithItsSpec(t *testing.T) {
	everyField := mergePatch(mustYAMLMap(t, everyFeaturePatch), mustYAMLMap(t, everyOtherFieldPatch))
	cases := append(validCases(t), validCase{name: "every field", input: mustJSON(t, mergePatch(baseSpec(t), everyField))})
	set := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			input := tc.input
			if input == nil {
				input = patched(t, tc.patch)
			}
			spec, err := Parse(input)
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := Parse(input)
			if err != nil {
				t.Fatal(err)
			}
			settings, err := Resolve(t.Context(), spec, tc.resolver, env(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(spec, fresh) {
				t.Fatal("Resolve changed its Spec")
			}
			for _, name := range referenceFields(settings) {
				set[name] = true
			}
			if n := scribble(reflect.ValueOf(settings).Elem()); n == 0 {
				t.Fatal("nothing in the Settings could be changed")
			}
			if !reflect.DeepEqual(spec, fresh) {
				t.Error("changing the Settings changed the Spec they came from")
			}
		})
	}
	// A field no case sets would not be checked.
	for _, f := range reflect.VisibleFields(reflect.TypeFor[Settings]()) {
		if isReference(f.Type.Kind()) && !set[f.Name] {
			t.Errorf("no valid case sets Settings.%s", f.Name)
		}
	}
}

// everyOtherFieldPatch adds to everyFeaturePatch what it leaves out.
const everyOtherFieldPatch = `
cloudProviderSpec:
  virtualMachine:
    template:
      gpus: [{name: gpu1, deviceName: nvidia.com/TU104GL_Tesla_T4}]
      hostDevices: [{name: nvme1, deviceName: example.com/nvme}]
    nodeSelector: {example.com/pool: tenants}
    tolerations: [{key: example.com/dedicated, operator: Equal, value: kubevirt, effect: NoSchedule}]
    sshService:
      type: LoadBalancer
      loadBalancerSourceRanges: [198.51.100.0/24]
      annotations: {metallb.universe.tf/address-pool: admin}
`

// referenceFields names the fields of Settings that hold a non-nil slice,
// map or pointer.
func referenceFields(s *Settings) []string {
	var names []string
	v := reflect.ValueOf(s).Elem()
	for _, f := range reflect.VisibleFields(v.Type()) {
		if isReference(f.Type.Kind()) && !v.FieldByIndex(f.Index).IsNil() {
			names = append(names, f.Name)
		}
	}
	return names
}

func isReference(k reflect.Kind) bool {
	return k == reflect.Slice || k == reflect.Map || k == reflect.Pointer
}

// scribble changes every settable value reachable from v, through
// pointers, slices and maps, and returns how many it changed.
func scribble(v reflect.Value) int {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 0
		}
		return scribble(v.Elem())
	case reflect.Struct:
		n := 0
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				n += scribble(f)
			}
		}
		return n
	case reflect.Slice, reflect.Array:
		n := 0
		for i := range v.Len() {
			n += scribble(v.Index(i))
		}
		return n
	case reflect.Map:
		for _, k := range v.MapKeys() {
			v.SetMapIndex(k, reflect.Zero(v.Type().Elem()))
		}
		return v.Len()
	case reflect.String:
		v.SetString(v.String() + "~")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	default:
		return 0
	}
	return 1
}
