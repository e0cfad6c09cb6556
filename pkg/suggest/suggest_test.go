package suggest

import (
	"strings"
	"testing"
)

func TestClosest(t *testing.T) {
	known := []string{"limits", "requests", "claims"}
	for key, want := range map[string]string{
		"limts": "limits", "Limits": "limits", "request": "requests", "claim": "claims", "lmiits": "limits",
		"typo": "", "x": "", strings.Repeat("l", 65): "",
	} {
		if got := Closest(key, known); got != want {
			t.Errorf("Closest(%q) = %q, want %q", key, got, want)
		}
	}
	if got := Closest("ab", []string{"ax", "ay"}); got != "ax" {
		t.Errorf("equally near: got %q, want the first", got)
	}
}
