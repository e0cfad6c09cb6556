package main

import (
	"strings"
	"testing"
)

// TestBoundsAreRefusedWithTheirRange: transfer counts out of range are
// refused with the range before any image is pulled or any bundle read,
// and a key or configuration path that never ends (/dev/zero) is read only
// up to its limit.
func TestBoundsAreRefusedWithTheirRange(t *testing.T) {
	missing := t.TempDir() + "/missing.tar"
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"bundle", "push", missing, "--registry", "registry.local", "--jobs", "0"}, "--jobs 0: must be between 1 and 64"},
		{[]string{"bundle", "push", missing, "--registry", "registry.local", "--jobs", "-4"}, "--jobs -4: must be between 1 and 64"},
		{[]string{"bundle", "push", missing, "--registry", "registry.local", "--attempts", "1000000"}, "--attempts 1000000: must be between 1 and 10"},
		{[]string{"mirror-images", "--registry", "registry.local", "--jobs", "100", "--attempts", "0"},
			"--jobs 100: must be between 1 and 64\n--attempts 0: must be between 1 and 10"},
		{[]string{"bundle", "create", "-o", missing, "--attempts", "-1"}, "--attempts -1: must be between 1 and 10"},
		{[]string{"bundle", "verify", missing, "--key", "/dev/zero"}, "failed to read the public key: /dev/zero is larger than 64 KiB, the limit for this file"},
		{[]string{"bundle", "sign", missing, "--key", "/dev/zero"}, "failed to read the signing key: /dev/zero is larger than 64 KiB, the limit for this file"},
		{[]string{"bundle", "create", "-o", missing, "--signing-key", "/dev/zero"}, "failed to read the signing key: /dev/zero is larger than 64 KiB"},
		{[]string{"template", "--config", "/dev/zero"}, "failed to read configuration: /dev/zero is larger than 4 MiB, the limit for this file"},
	} {
		t.Run(strings.ReplaceAll(strings.Join(tt.args, " "), missing, "FILE"), func(t *testing.T) {
			out, err := execute(t, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
			if out != "" {
				t.Errorf("output before the refusal:\n%s", out)
			}
		})
	}
}
