package tenant

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestEventNote: a Warning event's note fits the API server's limit and is
// cut on a character boundary.
func TestEventNote(t *testing.T) {
	for _, msg := range []string{"short", strings.Repeat("a", noteLimit), strings.Repeat("ä", noteLimit), strings.Repeat("x", 3*noteLimit)} {
		got := EventNote(msg)
		switch {
		case len(got) > noteLimit:
			t.Errorf("note of %d bytes", len(got))
		case !utf8.ValidString(got):
			t.Errorf("note cut inside a character: %q", got[len(got)-8:])
		case len(msg) <= noteLimit && got != msg:
			t.Errorf("a short note was changed to %q", got)
		}
	}
}
