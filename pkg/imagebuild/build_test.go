package imagebuild

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

var amd64 = v1.Platform{OS: "linux", Architecture: "amd64"}

// created is the commit time of the test builds.
var created = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// tinyModule writes a module with one main package, example.com/hello,
// to a new temporary directory and returns it.
func tinyModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":  "module example.com/hello\n\ngo 1.26.0\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func testOptions(moduleDir string) Options {
	return Options{
		ModuleDir: moduleDir, Repository: "registry.example/kkp", Version: "v0.0.0-test", Commit: "0123456789abcdef",
		Created: created, Source: "https://example.com/kkp", Licenses: "Apache-2.0", Platforms: []v1.Platform{amd64},
	}
}

var hello = Image{Name: "hello", Package: "example.com/hello", Names: []string{"hello", "hi"}}

// TestSameSourceSameDigests: the same module, copied to two directories
// and built with two work directories at different times, gives the same
// index, platform image and SBOM digests.
func TestSameSourceSameDigests(t *testing.T) {
	var digests [][]string
	for i := range 2 {
		o := testOptions(tinyModule(t))
		o.WorkDir = t.TempDir()
		built, err := Build(t.Context(), o, []Image{hello})
		if err != nil {
			t.Fatal(err)
		}
		b := built[0]
		m, err := b.Index.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		got := []string{b.Digest.String(), m.Manifests[0].Digest.String()}
		for _, r := range b.Referrers {
			got = append(got, r.Ref)
		}
		digests = append(digests, got)
		if i == 0 {
			time.Sleep(1100 * time.Millisecond) // a wall-clock second apart
		}
	}
	if strings.Join(digests[0], " ") != strings.Join(digests[1], " ") {
		t.Errorf("two builds of the same source differ:\n%s\n%s", strings.Join(digests[0], "\n"), strings.Join(digests[1], "\n"))
	}
}

// layerFile is one entry of an image's file system.
type layerFile struct {
	hdr  *tar.Header
	data []byte
}

// files reads every entry of img's layers by name, without a leading /.
func files(t *testing.T, img v1.Image) map[string]layerFile {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]layerFile{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			hdr, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			out[strings.TrimSuffix(hdr.Name, "/")] = layerFile{hdr: hdr, data: data}
		}
		_ = rc.Close()
	}
	return out
}

// TestMachineControllerImage builds the real machine-controller image for
// linux/amd64 and checks what Kubermatic relies on: both binaries in
// /usr/local/bin, executable, the binary runs as uid 65534, the config's
// entrypoint, user, platform and labels, the root's files, and an SBOM
// that lists the binary's modules.
func TestMachineControllerImage(t *testing.T) {
	b := machineControllerBuild(t)
	sizes, err := Sizes(b)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s@%s: %s", b.Ref, b.Digest, sizes)
	img := machineControllerAMD64(t)
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	checkConfig(t, cfg)
	fsys := files(t, img)
	bin := checkBinaries(t, fsys)
	if !strings.Contains(string(fsys["etc/passwd"].data), "nobody:x:65534:65534:") {
		t.Errorf("/etc/passwd has no nobody with uid 65534:\n%s", fsys["etc/passwd"].data)
	}
	if n := bytes.Count(fsys[CertFile].data, []byte("BEGIN CERTIFICATE")); n < 100 {
		t.Errorf("%s holds %d certificates, want the Mozilla roots (over 100)", CertFile, n)
	}
	runAsNobody(t, bin)
	checkSBOM(t, b)
}

// machineControllerBuilt is the one build of the real machine-controller
// image the package's tests share: a build takes most of their time.
var machineControllerBuilt = sync.OnceValues(func() (Built, error) {
	root, err := filepath.Abs("../..")
	if err != nil {
		return Built{}, err
	}
	mc := Image{Name: "machine-controller", Package: "github.com/kubevirt-kkp/kkp-kubevirt/cmd/machine-controller", Names: []string{"machine-controller", "webhook"}}
	// Not a test's context: the build outlives the first test that asks.
	built, err := Build(context.Background(), testOptions(root), []Image{mc})
	if err != nil {
		return Built{}, err
	}
	return built[0], nil
})

// machineControllerBuild builds the machine-controller image for
// linux/amd64 on the first call and returns that build on every call.
func machineControllerBuild(t *testing.T) Built {
	t.Helper()
	b, err := machineControllerBuilt()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// machineControllerAMD64 is the linux/amd64 image of machineControllerBuild.
func machineControllerAMD64(t *testing.T) v1.Image {
	t.Helper()
	b := machineControllerBuild(t)
	img, err := b.Index.Image(platformDigest(t, b.Index, amd64))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// platformDigest is the digest of the manifest for p in idx.
func platformDigest(t *testing.T, idx v1.ImageIndex, p v1.Platform) v1.Hash {
	t.Helper()
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.Equals(p) {
			return d.Digest
		}
	}
	t.Fatalf("the index has no %s manifest: %+v", p, m.Manifests)
	return v1.Hash{}
}

func checkConfig(t *testing.T, cfg *v1.ConfigFile) {
	t.Helper()
	if got := strings.Join(cfg.Config.Entrypoint, " "); got != "/usr/local/bin/machine-controller" {
		t.Errorf("entrypoint %q", got)
	}
	if cfg.Config.User != "65534:65534" {
		t.Errorf("user %q, want 65534:65534", cfg.Config.User)
	}
	if cfg.OS != "linux" || cfg.Architecture != "amd64" {
		t.Errorf("platform %s/%s", cfg.OS, cfg.Architecture)
	}
	want := map[string]string{LabelSource: "https://example.com/kkp", LabelRevision: "0123456789abcdef", LabelVersion: "v0.0.0-test", LabelLicenses: "Apache-2.0"}
	for k, v := range want {
		if cfg.Config.Labels[k] != v {
			t.Errorf("label %s is %q, want %q", k, cfg.Config.Labels[k], v)
		}
	}
	if !cfg.Created.Equal(created) {
		t.Errorf("created %s, want the commit time %s", cfg.Created, created)
	}
}

// checkBinaries checks both binaries and writes the controller to a file,
// whose path it returns.
func checkBinaries(t *testing.T, fsys map[string]layerFile) string {
	t.Helper()
	mc, webhook := fsys["usr/local/bin/machine-controller"], fsys["usr/local/bin/webhook"]
	if mc.hdr == nil || webhook.hdr == nil {
		t.Fatalf("the image lacks /usr/local/bin/machine-controller or /usr/local/bin/webhook")
	}
	if mc.hdr.Typeflag != tar.TypeReg || len(mc.data) < 1<<20 {
		t.Errorf("machine-controller is not a regular file of a binary's size: type %c, %d bytes", mc.hdr.Typeflag, len(mc.data))
	}
	if webhook.hdr.Typeflag != tar.TypeLink || webhook.hdr.Linkname != "usr/local/bin/machine-controller" {
		t.Errorf("webhook is not a hard link to machine-controller: type %c, link %q", webhook.hdr.Typeflag, webhook.hdr.Linkname)
	}
	for _, f := range []layerFile{mc, webhook} {
		if f.hdr.Mode&0o001 == 0 || f.hdr.Uid != 0 {
			t.Errorf("%s: mode %o, uid %d; want executable by anyone, owned by root", f.hdr.Name, f.hdr.Mode, f.hdr.Uid)
		}
	}
	// nobody must reach the binary: the test's directories are 0700.
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "webhook")
	if err := os.WriteFile(bin, mc.data, os.FileMode(mc.hdr.Mode)); err != nil {
		t.Fatal(err)
	}
	return bin
}

// runAsNobody runs the binary, under the webhook's name, with -version as
// uid and gid 65534 when the test may switch users, and checks it reports
// the build's version and commit.
func runAsNobody(t *testing.T, bin string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), bin, "-version")
	cmd.Env = []string{}
	if os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: Nobody, Gid: Nobody}}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the image's binary as webhook -version: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "v0.0.0-test") || !strings.Contains(string(out), "0123456789abcdef") {
		t.Errorf("webhook -version printed %q, want the version and commit of the build", out)
	}
}

// checkSBOM checks the SBOM referrer names the index as its subject and
// lists the modules the controller links.
func checkSBOM(t *testing.T, b Built) {
	t.Helper()
	if len(b.Referrers) != 1 {
		t.Fatalf("referrers of an unsigned image: %d, want the SBOM alone", len(b.Referrers))
	}
	m, err := b.Referrers[0].Image.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject == nil || m.Subject.Digest != b.Digest || m.Layers[0].MediaType != SBOMMediaType {
		t.Fatalf("the SBOM manifest has subject %+v and layer %s, want the index %s and %s", m.Subject, m.Layers[0].MediaType, b.Digest, SBOMMediaType)
	}
	l, err := b.Referrers[0].Image.LayerByDigest(m.Layers[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := l.Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	var bom cdx.BOM
	if err := json.NewDecoder(rc).Decode(&bom); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, c := range *bom.Components {
		names[c.Name] = c.Version
	}
	for _, want := range []string{"sigs.k8s.io/controller-runtime", "k8s.io/client-go", "k8c.io/machine-controller/sdk", "stdlib", "machine-controller"} {
		if names[want] == "" {
			t.Errorf("the SBOM does not list %s", want)
		}
	}
	if bom.Metadata.Component.Version != b.Digest.String() && !strings.Contains(bom.Metadata.Component.PackageURL, b.Digest.Hex) {
		t.Errorf("the SBOM's subject %s does not name the index %s", bom.Metadata.Component.PackageURL, b.Digest)
	}
}
