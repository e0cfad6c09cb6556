package addons

import (
	"maps"
	"testing"
)

// FuzzParseFeatureGates checks that no --ccm-feature-gates value makes the
// parser panic and that whatever it accepts renders back (String) to a
// value that parses to the same gates, so the CCM gets what was asked for.
func FuzzParseFeatureGates(f *testing.F) {
	for _, seed := range []string{"", "A=true", " SomeGate = false ,Other=1", "A", "=true", "A=yes", "a-b=true", "A=true,,B=false"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		gates, err := ParseFeatureGates(s)
		if err != nil {
			return
		}
		again, err := ParseFeatureGates(gates.String())
		if err != nil {
			t.Fatalf("%q parsed, but its rendering %q does not: %v", s, gates.String(), err)
		}
		if !maps.Equal(gates, again) {
			t.Fatalf("%q gives %v, its rendering %q gives %v", s, gates, gates.String(), again)
		}
	})
}
