package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/bundle/bundletest"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/registrytest"
)

var (
	digestPattern = regexp.MustCompile(`sha256:[0-9a-f]{64}`)
	countPattern  = regexp.MustCompile(`\d+ (files|images)`)
)

// transcript runs each command line and records it with its exit code,
// output and error, with the directory, the registry, digests and counts
// replaced by placeholders so that the record is stable.
func transcript(t *testing.T, dir, registry string, commands [][]string) string {
	t.Helper()
	var b strings.Builder
	for _, args := range commands {
		out, err := execute(t, args...)
		code, msg := 0, ""
		if err != nil {
			code, msg = 1, "Error: "+err.Error()+"\n"
		}
		fmt.Fprintf(&b, "$ kubevirt-installer %s\n%s%sexit %d\n\n", strings.Join(args, " "), out, msg, code)
	}
	s := strings.ReplaceAll(b.String(), dir, "$DIR")
	s = strings.ReplaceAll(s, registry, "$REGISTRY")
	s = digestPattern.ReplaceAllString(s, "sha256:$$DIGEST")
	return countPattern.ReplaceAllString(s, "N $1")
}

// TestBundleSigningCommands signs bundles with create --signing-key and
// sign, and checks what verify, push, install and inspect make of right,
// wrong and missing signatures, as exit codes and messages.
func TestBundleSigningCommands(t *testing.T) {
	upstream, _ := serveUpstream(t)
	private := registrytest.Start(t)
	dir := t.TempDir()
	bundletest.CosignKeyPair(t, dir, "cosign", "s3cret")
	bundletest.PKCS8KeyPair(t, dir, "other")
	t.Setenv(passwordEnv, "s3cret")
	in := func(name string) string { return filepath.Join(dir, name) }

	out, err := execute(t, "bundle", "create", "-o", in("signed.tar.zst"), "--signing-key", in("cosign.key"), pullMirrorFlag(upstream))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "signed with "+in("cosign.key")+"\n") {
		t.Errorf("create output does not report the signature:\n%s", out)
	}
	if out, err := execute(t, "bundle", "create", "-o", in("unsigned.tar"), pullMirrorFlag(upstream)); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	private.ResetCounts()
	got := transcript(t, dir, private.Host, [][]string{
		{"bundle", "verify", in("signed.tar.zst"), "--key", in("cosign.pub")},
		{"bundle", "verify", in("signed.tar.zst")},
		{"bundle", "verify", in("signed.tar.zst"), "--key", in("other.pub")},
		{"bundle", "verify", in("unsigned.tar"), "--key", in("cosign.pub")},
		{"bundle", "verify", in("unsigned.tar")},
		{"bundle", "verify", in("signed.tar.zst"), "--key", in("cosign.key")},
		{"bundle", "push", in("signed.tar.zst"), "--registry", private.Host + "/airgap", "--key", in("other.pub")},
		{"bundle", "push", in("unsigned.tar"), "--registry", private.Host + "/airgap", "--key", in("cosign.pub")},
		{"install", "--bundle", in("signed.tar.zst"), "--registry", private.Host + "/airgap", "--key", in("other.pub")},
		{"install", "--bundle", in("unsigned.tar"), "--registry", private.Host + "/airgap", "--key", in("other.pub")},
		{"install", "--registry", private.Host + "/airgap", "--key", in("other.pub")},
	})
	if c := private.Counts(); c.BlobUploads != 0 || c.ManifestPuts != 0 || c.BlobChecks != 0 {
		t.Errorf("refused pushes reached the registry: %+v", c)
	}
	t.Setenv(passwordEnv, "wrong")
	got += transcript(t, dir, private.Host, [][]string{
		{"bundle", "sign", in("unsigned.tar"), "--key", in("cosign.key")},
		{"bundle", "sign", in("unsigned.tar"), "--key", in("other.key")},
		{"bundle", "verify", in("unsigned.tar"), "--key", in("other.pub")},
		{"bundle", "inspect", in("unsigned.tar"), "--key", in("cosign.pub")},
		{"bundle", "inspect", in("signed.tar.zst"), "-o", "yaml"},
	})
	checkGolden(t, "bundle-signing.golden", got)
}
