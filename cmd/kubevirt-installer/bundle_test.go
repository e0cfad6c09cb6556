package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/installertest"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/registrytest"
)

// pullMirrorFlag points the pinned references at the upstream test registry.
func pullMirrorFlag(reg *registrytest.Registry) string {
	return "--pull-mirror=quay.io=" + reg.Host + "/quay.io,docker.io=" + reg.Host + "/docker.io,ghcr.io=" + reg.Host + "/ghcr.io,registry.k8s.io=" + reg.Host + "/registry.k8s.io"
}

// serveUpstream serves a small random image for every pinned image.
func serveUpstream(t *testing.T) (*registrytest.Registry, int) {
	t.Helper()
	releases, err := components.Load(components.Default())
	if err != nil {
		t.Fatal(err)
	}
	refs := installer.Images(releases)
	reg := registrytest.Start(t)
	reg.Serve(t, registrytest.Images(t, refs, 2048, 256))
	return reg, len(refs)
}

// TestOfflineBundle creates, verifies, tampers with and pushes a bundle of
// every pinned image through the command line, then installs from it
// against the API server with every image relocated.
func TestOfflineBundle(t *testing.T) {
	upstream, n := serveUpstream(t)
	private := registrytest.Start(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "kubevirt.tar.gz")
	registry := private.Host + "/airgap"

	out, err := execute(t, "bundle", "create", "-o", file, pullMirrorFlag(upstream))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{fmt.Sprintf("pulling %d images\n", n), fmt.Sprintf("image %d/%d registry.k8s.io/sig-storage/livenessprobe:v2.15.0", n, n), "aggregate checksum: sha256:"} {
		if !strings.Contains(out, want) {
			t.Errorf("create output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(file + ".work"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the work directory was left behind: %v", err)
	}
	checksum := out[strings.LastIndex(out, "sha256:") : len(out)-1]

	t.Run("verify", func(t *testing.T) { checkVerify(t, file, checksum, n) })
	t.Run("verify refuses a tampered bundle", func(t *testing.T) {
		checkTampered(t, file, filepath.Join(dir, "tampered.tar"), registry)
	})
	t.Run("push skips what the registry has", func(t *testing.T) { checkPush(t, file, registry, private, n) })
	t.Run("mirror-images copies without a bundle", func(t *testing.T) { checkMirrorImages(t, upstream) })
	t.Run("template relocates every image", func(t *testing.T) { checkTemplateRelocated(t, registry) })
	t.Run("relocated install", func(t *testing.T) {
		checkRelocatedInstall(t, file, registry)
	})
}

func checkRelocatedInstall(t *testing.T, file, registry string) {
	t.Helper()
	requireEnv(t)
	installertest.Start(t, testClient)
	cluster := []string{"--kubeconfig", testEnv.KubeconfigPath, "--poll-interval", "20ms", "--timeout", "30s"}
	args := append([]string{"install"}, cluster...)
	args = append(args, "--bundle", file, "--registry", registry, "--skip", "cni-plugins,multus", "--use-emulation", "--skip-preflight")
	if out, err := execute(t, args...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	defer func() {
		if out, err := execute(t, append([]string{"uninstall", "--crds"}, cluster...)...); err != nil {
			t.Errorf("uninstall: %v\n%s", err, out)
		}
	}()
	for _, d := range []types.NamespacedName{{Namespace: "kubevirt", Name: "virt-operator"}, {Namespace: "cdi", Name: "cdi-operator"}} {
		var dep appsv1.Deployment
		if err := testClient.Get(t.Context(), d, &dep); err != nil {
			t.Fatal(err)
		}
		var outside []string
		relocated := 0
		for _, c := range dep.Spec.Template.Spec.Containers {
			if !strings.HasPrefix(c.Image, registry+"/kubevirt/") {
				outside = append(outside, c.Name+".image="+c.Image)
			}
			for _, e := range c.Env {
				if !strings.HasSuffix(e.Name, "_IMAGE") {
					continue
				}
				relocated++
				if !strings.HasPrefix(e.Value, registry+"/kubevirt/") {
					outside = append(outside, e.Name+"="+e.Value)
				}
			}
		}
		// virt-operator passes 11 images on, cdi-operator 7.
		if relocated < 7 {
			t.Errorf("%s passes %d images through its environment, want at least 7", d, relocated)
		}
		if diff := cmp.Diff([]string(nil), outside); diff != "" {
			t.Errorf("%s: images outside the private registry (-want +got):\n%s", d, diff)
		}
	}
}

// changeEntry copies the bundle at src to an uncompressed tar at dst with
// one byte of entry name flipped.
func changeEntry(t *testing.T, src, dst, name string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	r, err := gzipReader(data)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	tr, tw := tar.NewReader(r), tar.NewWriter(&b)
	found := false
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		content, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Name == name {
			content[0] ^= 0x20
			found = true
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(content); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil || !found {
		t.Fatalf("close: %v, found %s: %t", err, name, found)
	}
	if err := os.WriteFile(dst, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func gzipReader(data []byte) (io.Reader, error) {
	return gzip.NewReader(bytes.NewReader(data))
}

// TestBundleVerifyOfADirectory: a directory gets an error that says a bundle
// is a file, and a non-zero exit.
func TestBundleVerifyOfADirectory(t *testing.T) {
	dir := t.TempDir()
	_, err := execute(t, "bundle", "verify", dir)
	if err == nil || !strings.Contains(err.Error(), "bundle "+dir+" is a directory, not a bundle file") {
		t.Errorf("got %v", err)
	}
}
