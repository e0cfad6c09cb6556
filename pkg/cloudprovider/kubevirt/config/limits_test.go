package config

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// setPath sets the dotted path in spec, creating the objects on the way.
func setPath(spec map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	obj := spec
	for _, part := range parts[:len(parts)-1] {
		next, ok := obj[part].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[part] = next
		}
		obj = next
	}
	obj[parts[len(parts)-1]] = v
}

// overLimit returns n entries for the field of l, each of the wrong JSON
// type (an object whose value is a list, where a string, a ConfigVar or
// another object belongs), so that any entry that was checked would be
// reported.
func overLimit(l Limit, n int) any {
	var typ reflect.Type
	for _, f := range jsonFields(l.in) {
		if f.name == l.name {
			typ = f.typ
		}
	}
	if typ.Kind() == reflect.Map {
		m := make(map[string]any, n)
		for i := range n {
			m[fmt.Sprintf("example.com/key-%d", i)] = wrongEntry()
		}
		return m
	}
	items := make([]any, n)
	for i := range items {
		items[i] = wrongEntry()
	}
	return items
}

func wrongEntry() any { return map[string]any{"value": []any{}} }

// TestLimitsRefuseBeforeEntries: a list or map over its limit is refused
// with its field path and the limit, as field.TooMany says it, and none
// of its entries is checked (each is of the wrong type and would be
// reported); at the limit, only the entries are reported.
func TestLimitsRefuseBeforeEntries(t *testing.T) {
	all := Limits()
	anti := all[0]
	for _, l := range all {
		if l.name == "values" {
			anti = l
			anti.Path = strings.Replace(l.Path, "nodeAffinityPreset", "nodeAntiAffinityPreset", 1)
		}
	}
	for _, l := range append(all, anti) {
		t.Run(l.Path, func(t *testing.T) {
			spec := baseSpec(t)
			setPath(spec, l.Path, overLimit(l, l.Max+1))
			_, err := Parse(mustJSON(t, spec))
			want := fmt.Sprintf("spec.providerSpec.value.%s: Too many: %d: must have at most %d items", l.Path, l.Max+1, l.Max)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("Parse = %v, want %q", err, want)
			}
			if strings.Contains(err.Error(), l.Path+"[") {
				t.Errorf("an entry over the limit was checked: %v", err)
			}

			setPath(spec, l.Path, overLimit(l, l.Max))
			_, err = Parse(mustJSON(t, spec))
			if err == nil || strings.Contains(err.Error(), "Too many") {
				t.Errorf("at the limit: Parse = %v, want the entries refused, not their number", err)
			}
		})
	}
}

// TestLimitsInTheFlatFormat: the limits hold for the fields of the flat
// format of KKP <= 2.20 too, under the flat field's path.
func TestLimitsInTheFlatFormat(t *testing.T) {
	cps := map[string]any{"clusterName": "c", "cpus": "1", "memory": "1Gi", "sourceURL": "http://h/i.img", "pvcSize": "10Gi",
		"dnsConfig": map[string]any{"searches": make([]any, 33)}}
	_, err := Parse(mustJSON(t, map[string]any{"cloudProvider": "kubevirt", "cloudProviderSpec": cps, "operatingSystem": "ubuntu"}))
	want := "spec.providerSpec.value.cloudProviderSpec.dnsConfig.searches: Too many: 33: must have at most 32 items"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Parse = %v, want %q", err, want)
	}
}

// TestValueTooLong: a providerSpec.value over MaxValueBytes is refused
// with the limit and its size, before it is decoded (it is no JSON at all
// here, which would be reported otherwise).
func TestValueTooLong(t *testing.T) {
	value := []byte(strings.Repeat("x", MaxValueBytes+1))
	_, err := Parse(value)
	want := fmt.Sprintf("spec.providerSpec.value: Too long: may not be more than %d bytes (it has %d)", MaxValueBytes, MaxValueBytes+1)
	if err == nil || err.Error() != "invalid KubeVirt provider spec: "+want {
		t.Fatalf("Parse = %v, want %q", err, want)
	}
	if _, err := Parse(value[:MaxValueBytes]); err == nil || strings.Contains(err.Error(), "Too long") {
		t.Errorf("at the limit: Parse = %v, want it decoded (and refused as no JSON)", err)
	}
}

// TestLimitsDocumented: docs/provider-spec.md names every limit with its
// number, and the byte budget.
func TestLimitsDocumented(t *testing.T) {
	data, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(data), "### 1.1 Limits")
	if !found {
		t.Fatal("docs/provider-spec.md has no section \"1.1 Limits\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for _, l := range Limits() {
		if row := fmt.Sprintf("| `%s` | %d |", l.Path, l.Max); !strings.Contains(section, row) {
			t.Errorf("the limits section has no row %q", row)
		}
	}
	if !strings.Contains(section, fmt.Sprintf("%d bytes", MaxValueBytes)) {
		t.Errorf("the limits section does not name the byte budget %d bytes", MaxValueBytes)
	}
}

// TestLimitsWithinMSIVectors: a spec at every device limit still fits the
// MSI vectors of a VM (the root and cloud-init disks, the secondary disks,
// the networks and the pod network, GPUs, host devices and the devices
// KubeVirt adds), so the limits refuse before msiVectors would.
func TestLimitsWithinMSIVectors(t *testing.T) {
	most := map[string]int{}
	for _, l := range Limits() {
		most[l.Path] = l.Max
	}
	total := 2 + most[templatePath+".secondaryDisks"] + most[vmPath+".networks"] + 1 +
		most[templatePath+".gpus"] + most[templatePath+".hostDevices"] + fixedPCIDevices
	if total > MaxMSIVectors {
		t.Errorf("a spec at the limits needs %d MSI vectors, more than the %d a VM has", total, MaxMSIVectors)
	}
}
