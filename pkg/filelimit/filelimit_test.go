package filelimit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	small := filepath.Join(t.TempDir(), "small")
	if err := os.WriteFile(small, []byte("12345678"), 0o600); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(small, 8); err != nil || string(data) != "12345678" {
		t.Errorf("a file at the limit: %q, %v", data, err)
	}
	var tooLarge *TooLargeError
	if _, err := ReadFile(small, 7); !errors.As(err, &tooLarge) || err.Error() != small+" is larger than 7 B, the limit for this file" {
		t.Errorf("a file over the limit: %v", err)
	}
	// /dev/zero never ends; the read stops after the limit.
	if _, err := ReadFile("/dev/zero", 64<<10); !errors.As(err, &tooLarge) || !strings.Contains(err.Error(), "larger than 64 KiB") {
		t.Errorf("/dev/zero: %v", err)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing"), 8); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 16 << 20: "16 MiB", 100 << 20: "100 MiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
