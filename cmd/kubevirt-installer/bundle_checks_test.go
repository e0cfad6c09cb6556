package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/registrytest"
)

func checkVerify(t *testing.T, file, checksum string, n int) {
	t.Helper()
	out, err := execute(t, "bundle", "verify", file, "--checksum", checksum)
	if err != nil || !strings.Contains(out, "verified") || !strings.Contains(out, fmt.Sprintf("%d images for linux/amd64", n)) {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := execute(t, "bundle", "verify", file, "--checksum", "sha256:0"); err == nil {
		t.Error("a wrong aggregate checksum was accepted")
	}
}

func checkTampered(t *testing.T, file, tampered, registry string) {
	t.Helper()
	changeEntry(t, file, tampered, "charts/kubevirt/values.yaml")
	_, err := execute(t, "bundle", "verify", tampered)
	if err == nil || !strings.Contains(err.Error(), "changed: charts/kubevirt/values.yaml") {
		t.Fatalf("got %v", err)
	}
	_, err = execute(t, "install", "--bundle", tampered, "--registry", registry, "--skip-preflight")
	if err == nil || !strings.Contains(err.Error(), "charts/kubevirt/values.yaml") {
		t.Errorf("install from a tampered bundle: %v", err)
	}
	if _, err := execute(t, "install", "--bundle", file); err == nil || !strings.Contains(err.Error(), "--bundle needs --registry") {
		t.Errorf("install --bundle without --registry: %v", err)
	}
}

func checkPush(t *testing.T, file, registry string, private *registrytest.Registry, n int) {
	t.Helper()
	out, err := execute(t, "bundle", "push", file, "--registry", registry)
	if err != nil || !strings.Contains(out, fmt.Sprintf("pushed %d images and 0 referrers of", n)) {
		t.Fatalf("%v\n%s", err, out)
	}
	if c := private.Counts(); c.ManifestPuts != n || c.BlobUploads == 0 {
		t.Errorf("first push: %+v", c)
	}
	private.ResetCounts()
	if out, err := execute(t, "bundle", "push", file, "--registry", registry); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if c := private.Counts(); c.BlobUploads != 0 {
		t.Errorf("second push uploaded %d blobs: %+v", c.BlobUploads, c)
	}
}

func checkMirrorImages(t *testing.T, upstream *registrytest.Registry) {
	t.Helper()
	other := registrytest.Start(t)
	out, err := execute(t, "mirror-images", "--registry", other.Host+"/m", "--skip", "kubevirt,cdi,infra-controller,machine-controller", pullMirrorFlag(upstream))
	if err != nil || !strings.HasSuffix(out, "mirrored 2 images to "+other.Host+"/m\n") {
		t.Fatalf("%v\n%s", err, out)
	}
	if c := other.Counts(); c.ManifestPuts != 2 {
		t.Errorf("mirror-images wrote %d manifests, want 2", c.ManifestPuts)
	}
}

func checkTemplateRelocated(t *testing.T, registry string) {
	t.Helper()
	out, err := execute(t, "template", "--registry", registry)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(out, "\n") {
		for _, host := range []string{"quay.io", "docker.io", "ghcr.io"} {
			if strings.Contains(line, host+"/") {
				t.Errorf("line %d still names %s: %s", i+1, host, line)
			}
		}
	}
}

func TestOfflineFlagErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.tar")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"bundle", "create", "-o", missing, "--compression", "lz4"}, `unknown compression "lz4"`},
		{[]string{"bundle", "create", "-o", missing, "--platform", "amd64"}, `platform "amd64" is not os/architecture`},
		{[]string{"bundle", "create"}, `required flag(s) "output" not set`},
		{[]string{"bundle", "push", missing, "--registry", "https://reg.local"}, "has a scheme"},
		{[]string{"bundle", "push", missing, "--registry", "reg.local"}, "failed to open bundle"},
		{[]string{"bundle", "verify", missing}, "failed to open bundle"},
		{[]string{"template", "--registry", "reg.local/UPPER"}, "failed to parse registry path"},
		{[]string{"mirror-images", "--registry", "reg.local", "--pull-mirror", "quay.io=https://x"}, "pull mirror of quay.io"},
	}
	for _, tt := range tests {
		_, err := execute(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want one containing %q", tt.args, err, tt.want)
		}
	}
}
